import type { Method, PathParamsOf, PathWith, QueryOf, RequestOf, ResponseOf } from './types.js';

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

async function request<T>(method: string, url: string, body?: unknown, contentType = 'application/json'): Promise<ApiResponse<T>> {
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

// The one typed client: a call names the route as the OpenAPI document spells it ('/api/projects/{id}/classes'), its
// path and query parameters and body are checked against the generated types (api-types.ts), and its answer is
// typed from them. Pages never write a response shape by hand.

/** The options of a call: path parameters (required when the route has any), query parameters, the JSON body. */
export type CallOptions<P extends PathWith<M>, M extends Method> = ([PathParamsOf<P, M>] extends [never] ? { path?: never } : { path: PathParamsOf<P, M> }) & {
  /** Query parameters with a server default are listed as required in the document: none is required here. */
  query?: Partial<QueryOf<P, M>>;
  body?: RequestOf<P, M>;
};
type Args<P extends PathWith<M>, M extends Method> = [PathParamsOf<P, M>] extends [never] ? [options?: CallOptions<P, M>] : [options: CallOptions<P, M>];
type Answer<P extends PathWith<M>, M extends Method> = [ResponseOf<P, M>] extends [never] ? void : ResponseOf<P, M>;

/** A route template filled in: `{name}` from the path parameters, then the defined query parameters. */
export function urlOf(template: string, options?: { path?: unknown; query?: unknown }): string {
  const path = (options?.path ?? {}) as Record<string, unknown>;
  const url = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(path[name])));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries((options?.query ?? {}) as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined && item !== null) query.append(name, String(item));
  }
  const q = query.toString();
  return q ? `${url}?${q}` : url;
}

function call<M extends Method>(method: M) {
  return async <P extends PathWith<M>>(path: P, ...[options]: Args<P, M>): Promise<Answer<P, M>> => {
    const body = options?.body ?? (method === 'post' ? {} : undefined);
    return (await request<Answer<P, M>>(method.toUpperCase(), urlOf(path, options), body)).data;
  };
}

export const api = {
  get: call('get'),
  post: call('post'),
  put: call('put'),
  patch: call('patch'),
  delete: call('delete'),
  /** A GET whose answer's headers matter too (a page of a list and its `X-Next-Cursor`). */
  page: async <P extends PathWith<'get'>>(path: P, ...[options]: Args<P, 'get'>): Promise<ApiResponse<Answer<P, 'get'>>> =>
    request<Answer<P, 'get'>>('GET', urlOf(path, options)),
  /** A text body (YAML) instead of JSON. */
  postText: async <P extends PathWith<'post'>>(path: P, text: string, ...[options]: Args<P, 'post'>): Promise<Answer<P, 'post'>> =>
    (await request<Answer<P, 'post'>>('POST', urlOf(path, options), text, 'application/yaml')).data,
  /** A text answer (YAML) as it is. */
  getText: async <P extends PathWith<'get'>>(path: P, ...[options]: Args<P, 'get'>): Promise<string> => {
    const data = (await request<unknown>('GET', urlOf(path, options))).data;
    return typeof data === 'string' ? data : JSON.stringify(data);
  },
};

export interface UploadProgress {
  loaded: number;
  total: number;
}

/** Multipart upload through XMLHttpRequest, which (unlike fetch) reports upload progress. */
export function upload<P extends PathWith<'post'>>(
  path: P,
  options: Omit<CallOptions<P, 'post'>, 'body'>,
  form: FormData,
  onProgress: (p: UploadProgress) => void,
): { promise: Promise<Answer<P, 'post'>>; abort: () => void } {
  type T = Answer<P, 'post'>;
  const xhr = new XMLHttpRequest();
  const promise = new Promise<T>((resolve, reject) => {
    xhr.open('POST', urlOf(path, options));
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
