/** Talks to the Versa API with the session cookie; a 401 sends the browser to the login page. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describeDetail(status, body));
  }
}

interface ValidationIssue {
  loc?: (string | number)[];
  msg?: string;
}

/** A person-readable sentence from a `{detail}` body (a string, or FastAPI's list of validation issues). */
export function describeDetail(status: number, body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: ValidationIssue) => `${(d.loc ?? []).filter((p) => p !== 'body').join('.')}: ${d.msg ?? 'invalid'}`)
      .join('; ');
  }
  if (status === 0) return 'Network error: the server could not be reached';
  return `Request failed (HTTP ${status})`;
}

export function redirectToLogin(): void {
  if (location.pathname === '/login') return;
  const next = encodeURIComponent(location.pathname + location.search);
  location.assign(`/login?next=${next}`);
}

export interface ApiResponse<T> {
  data: T;
  headers: Headers;
}

export async function request<T>(method: string, url: string, body?: unknown, contentType = 'application/json'): Promise<ApiResponse<T>> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.body = contentType === 'application/json' ? JSON.stringify(body) : String(body);
    (init.headers as Record<string, string>)['content-type'] = contentType;
  }
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch {
    throw new ApiError(0, null);
  }
  const text = await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (res.status === 401 && !url.startsWith('/api/auth/login')) redirectToLogin();
  if (!res.ok) throw new ApiError(res.status, parsed);
  return { data: parsed as T, headers: res.headers };
}

export const api = {
  get: async <T>(url: string) => (await request<T>('GET', url)).data,
  post: async <T>(url: string, body?: unknown) => (await request<T>('POST', url, body ?? {})).data,
  put: async <T>(url: string, body: unknown) => (await request<T>('PUT', url, body)).data,
  patch: async <T>(url: string, body: unknown) => (await request<T>('PATCH', url, body)).data,
  delete: async <T>(url: string) => (await request<T>('DELETE', url)).data,
  /** A text body (YAML) instead of JSON. */
  postText: async <T>(url: string, text: string, contentType = 'application/yaml') => (await request<T>('POST', url, text, contentType)).data,
  /** A text answer (YAML) as it is. */
  getText: async (url: string) => {
    const data = (await request<unknown>('GET', url)).data;
    return typeof data === 'string' ? data : JSON.stringify(data);
  },
};

export interface UploadProgress {
  loaded: number;
  total: number;
}

/** Multipart upload through XMLHttpRequest, which (unlike fetch) reports upload progress. */
export function upload<T>(url: string, form: FormData, onProgress: (p: UploadProgress) => void): { promise: Promise<T>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<T>((resolve, reject) => {
    xhr.open('POST', url);
    xhr.withCredentials = true;
    xhr.upload.onprogress = (e) => onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : 0 });
    xhr.onerror = () => reject(new ApiError(0, null));
    xhr.onabort = () => reject(new ApiError(0, { detail: 'Upload cancelled' }));
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        body = xhr.responseText;
      }
      if (xhr.status === 401) redirectToLogin();
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as T);
      else reject(new ApiError(xhr.status, body));
    };
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}

/** True when the server has no such route at all (a feature that has not landed), not a missing record. */
export function isMissingRoute(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.status !== 404) return false;
  const detail = (err.body as { detail?: unknown } | null)?.detail;
  return typeof detail === 'string' && detail.startsWith('Route ');
}
