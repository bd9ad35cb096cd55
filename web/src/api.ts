import { ApiError, createClient, urlOf, type Answer, type CallOptions } from '../../clients/typescript/client.js';
import type { PathWith } from './types.js';

/**
 * The pages' API client: the typed client of clients/typescript (the same code Node scripts use), on the page's own
 * origin with the session cookie; a 401 sends the browser to the login page. Pages never write a response shape by
 * hand: a call names the route as the OpenAPI document spells it and its answer is typed from the generated types.
 */

export { ApiError, describeDetail, urlOf, type ApiResponse, type CallOptions } from '../../clients/typescript/client.js';

export function redirectToLogin(): void {
  if (location.pathname === '/login') return;
  const next = encodeURIComponent(location.pathname + location.search);
  location.assign(`/login?next=${next}`);
}

export const api = createClient({
  init: { credentials: 'same-origin' },
  onError: (error, url) => {
    if (error.status === 401 && !url.startsWith('/api/auth/login')) redirectToLogin();
  },
});

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
