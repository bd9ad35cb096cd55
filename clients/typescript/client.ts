import { OPERATIONS } from './operations.js';
import type { Method, PathParamsOf, PathWith, QueryOf, RequestOf, ResponseOf } from './types.js';

/**
 * The typed Versa API client: a call names the route as the OpenAPI document spells it ('/api/projects/{id}/classes'),
 * its path and query parameters and body are checked against the generated types (api-types.ts), and its answer is
 * typed from them. Platform-neutral: it needs only `fetch`, so the same code runs in the web pages (cookie session,
 * see web/src/api.ts) and in Node scripts (a base URL and a bearer token).
 */

/** An answer with an error status (or status 0: the server could not be reached); `body` is the parsed answer. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describeDetail(status, body));
    this.name = 'ApiError';
  }

  /** The API's `detail`: a sentence, or (422) the list of `{loc, msg, type}` issues. */
  get detail(): unknown {
    return (this.body as { detail?: unknown } | null)?.detail;
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

/** The options of a call: path parameters (required when the route has any), query parameters, the JSON body. */
export type CallOptions<P extends PathWith<M>, M extends Method> = ([PathParamsOf<P, M>] extends [never] ? { path?: never } : { path: PathParamsOf<P, M> }) & {
  /** Query parameters with a server default are listed as required in the document: none is required here. */
  query?: Partial<QueryOf<P, M>>;
  body?: RequestOf<P, M>;
};
export type Args<P extends PathWith<M>, M extends Method> = [PathParamsOf<P, M>] extends [never] ? [options?: CallOptions<P, M>] : [options: CallOptions<P, M>];
export type Answer<P extends PathWith<M>, M extends Method> = [ResponseOf<P, M>] extends [never] ? void : ResponseOf<P, M>;

/** An operation's name in the document (`listImages`, `createAnnotation`, …). */
export type OperationId = keyof typeof OPERATIONS;
type MethodOf<K extends OperationId> = (typeof OPERATIONS)[K][0];
type PathOf<K extends OperationId> = (typeof OPERATIONS)[K][1];
export type OperationArgs<K extends OperationId> = PathOf<K> extends PathWith<MethodOf<K>> ? Args<PathOf<K>, MethodOf<K>> : never;
export type OperationAnswer<K extends OperationId> = PathOf<K> extends PathWith<MethodOf<K>> ? Answer<PathOf<K>, MethodOf<K>> : never;

export interface ApiResponse<T> {
  data: T;
  headers: Headers;
}

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

export interface ClientOptions {
  /** The server's address (`http://localhost:8000`); empty (the default) for the page's own origin in a browser. */
  baseUrl?: string;
  /** A login token or an API token, sent as `Authorization: Bearer <token>`. */
  token?: string | null;
  /** Fetch options added to every request (the pages send `credentials: 'same-origin'` for their session cookie). */
  init?: RequestInit;
  /** Sees every error answer before it is thrown (the pages send a 401 to the login page). */
  onError?: (error: ApiError, url: string) => void;
  /** The fetch to use; the global one by default. */
  fetch?: typeof fetch;
}

export interface VersaClient {
  readonly options: Readonly<ClientOptions>;
  get: <P extends PathWith<'get'>>(path: P, ...[options]: Args<P, 'get'>) => Promise<Answer<P, 'get'>>;
  post: <P extends PathWith<'post'>>(path: P, ...[options]: Args<P, 'post'>) => Promise<Answer<P, 'post'>>;
  put: <P extends PathWith<'put'>>(path: P, ...[options]: Args<P, 'put'>) => Promise<Answer<P, 'put'>>;
  patch: <P extends PathWith<'patch'>>(path: P, ...[options]: Args<P, 'patch'>) => Promise<Answer<P, 'patch'>>;
  delete: <P extends PathWith<'delete'>>(path: P, ...[options]: Args<P, 'delete'>) => Promise<Answer<P, 'delete'>>;
  /** A GET whose answer's headers matter too (a page of a list: `X-Total-Count`, `Link`, `X-Next-Cursor`). */
  page: <P extends PathWith<'get'>>(path: P, ...[options]: Args<P, 'get'>) => Promise<ApiResponse<Answer<P, 'get'>>>;
  /** Every item of a paged list, page after page (each of `limit` items), as the server's `Link` header leads. */
  all: <P extends PathWith<'get'>>(path: P, ...[options]: Args<P, 'get'>) => AsyncGenerator<PageItem<Answer<P, 'get'>>>;
  /** A text body (YAML) instead of JSON. */
  postText: <P extends PathWith<'post'>>(path: P, text: string, ...[options]: Args<P, 'post'>) => Promise<Answer<P, 'post'>>;
  /** A text answer (YAML) as it is. */
  getText: <P extends PathWith<'get'>>(path: P, ...[options]: Args<P, 'get'>) => Promise<string>;
  /** A multipart body (files); `FormData` and `Blob` are global in browsers and in Node 20. */
  postForm: <P extends PathWith<'post'>>(path: P, form: FormData, ...[options]: Args<P, 'post'>) => Promise<Answer<P, 'post'>>;
  /** A file download's answer as it is, for its `body` stream, `arrayBuffer()` or `blob()` (error statuses throw). */
  download: <P extends PathWith<'get'>>(path: P, ...[options]: Args<P, 'get'>) => Promise<Response>;
  /**
   * A JSON operation by its operationId, as generated clients name it: `call('listImages', {path: {id: 7}})` is
   * `get('/api/projects/{id}/images', {path: {id: 7}})`. File downloads go through `download`.
   */
  call: <K extends OperationId>(operationId: K, ...[options]: OperationArgs<K>) => Promise<OperationAnswer<K>>;
  /** The same client with another token (after logging in). */
  withToken: (token: string | null) => VersaClient;
}

type PageItem<T> = T extends readonly (infer I)[] ? I : never;

async function parse(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A client for one server and one set of credentials. */
export function createClient(options: ClientOptions = {}): VersaClient {
  const base = (options.baseUrl ?? '').replace(/\/+$/, '');
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));

  async function send(method: string, url: string, body?: BodyInit, contentType?: string): Promise<Response> {
    const headers = new Headers(options.init?.headers);
    if (contentType) headers.set('content-type', contentType);
    if (options.token) headers.set('authorization', `Bearer ${options.token}`);
    let res: Response;
    try {
      res = await doFetch(base + url, { ...options.init, method, headers, body });
    } catch {
      const error = new ApiError(0, null);
      options.onError?.(error, url);
      throw error;
    }
    if (!res.ok) {
      const error = new ApiError(res.status, await parse(res));
      options.onError?.(error, url);
      throw error;
    }
    return res;
  }

  async function request<T>(method: string, url: string, body?: unknown, contentType = 'application/json'): Promise<ApiResponse<T>> {
    const payload = body === undefined ? undefined : contentType === 'application/json' ? JSON.stringify(body) : String(body);
    const res = await send(method, url, payload, payload === undefined ? undefined : contentType);
    return { data: (await parse(res)) as T, headers: res.headers };
  }

  function call<M extends Method>(method: M) {
    return async <P extends PathWith<M>>(path: P, ...[call]: Args<P, M>): Promise<Answer<P, M>> => {
      const body = call?.body ?? (method === 'post' ? {} : undefined);
      return (await request<Answer<P, M>>(method.toUpperCase(), urlOf(path, call), body)).data;
    };
  }

  const client: VersaClient = {
    options,
    get: call('get'),
    post: call('post'),
    put: call('put'),
    patch: call('patch'),
    delete: call('delete'),
    page: async (path, ...[call]) => request('GET', urlOf(path, call)),
    all: async function* (path, ...[call]) {
      // The server names the next page in a `Link: <…>; rel="next"` header (an `after` cursor) while there is one.
      let url: string | undefined = urlOf(path, call);
      while (url) {
        const page: ApiResponse<unknown> = await request<unknown>('GET', url);
        for (const item of Array.isArray(page.data) ? page.data : []) yield item as never;
        url = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      }
    },
    postText: async (path, text, ...[call]) => (await request('POST', urlOf(path, call), text, 'application/yaml')).data as never,
    getText: async (path, ...[call]) => {
      const data = (await request<unknown>('GET', urlOf(path, call))).data;
      return typeof data === 'string' ? data : JSON.stringify(data);
    },
    postForm: async (path, form, ...[call]) => (await parse(await send('POST', urlOf(path, call), form))) as never,
    download: async (path, ...[call]) => send('GET', urlOf(path, call)),
    call: async (operationId, ...[call]) => {
      const [method, path] = OPERATIONS[operationId];
      const options = call as { path?: unknown; query?: unknown; body?: unknown } | undefined;
      const body = options?.body ?? (method === 'post' ? {} : undefined);
      return (await request(method.toUpperCase(), urlOf(path, options), body)).data as never;
    },
    withToken: (token) => createClient({ ...options, token }),
  };
  return client;
}
