import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/** An answer with a 4xx/5xx status; `detail` is the API's `detail` (a string or a list of {loc, msg, type}). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}: ${describeDetail(detail)}`);
  }
}

/** The server could not be reached at all (refused, reset, DNS). */
export class ConnectionError extends Error {}

function describeDetail(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail.map((d: { loc?: unknown[]; msg?: string }) => (d?.loc ? `${d.loc.join('.')}: ${d.msg ?? ''}` : JSON.stringify(d))).join('; ');
  }
  return JSON.stringify(detail);
}

/** A request body that can be made again for a retry (a stream can be read only once). */
type BodyFactory = () => { body: string | Readable; headers: Record<string, string> };

/** How many times a 429 or 503 answer is retried, honouring its Retry-After (seconds), else backing off. */
const RETRIES = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The API calls the command-line tool makes (fetch, bearer token), with retries on 429/503 and streamed files. */
export class VersaApi {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    public token: string | null = null,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  private async send(method: string, path: string, make?: BodyFactory, retryable = true): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (this.token) headers.authorization = `Bearer ${this.token}`;
      const made = make?.();
      if (made) Object.assign(headers, made.headers);
      let res: Response;
      try {
        res = made?.body instanceof Readable
          ? await streamRequest(method, this.baseUrl + path, headers, made.body)
          : await fetch(this.baseUrl + path, { method, headers, body: made?.body });
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new ConnectionError(`cannot reach ${this.baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message})`);
      }
      if ((res.status === 429 || res.status === 503) && retryable && attempt < RETRIES) {
        const after = Number(res.headers.get('retry-after'));
        await res.body?.cancel();
        await sleep(Number.isFinite(after) && after >= 0 ? Math.min(after, 60) * 1000 : 500 * 2 ** attempt);
        continue;
      }
      return res;
    }
  }

  private static async parse<T>(res: Response): Promise<T> {
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = { detail: text };
    }
    if (!res.ok) throw new ApiError(res.status, parsed?.detail ?? parsed, parsed);
    return parsed as T;
  }

  async request<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const make: BodyFactory | undefined =
      body === undefined ? undefined : () => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    return VersaApi.parse<T>(await this.send(method, path, make));
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }

  post<T = any>(path: string, body: unknown = {}) {
    return this.request<T>('POST', path, body);
  }

  /** Every item of a paged list (`limit` + the `Link: <…>; rel="next"` cursor the server sends). */
  async *pages<T = any>(path: string, limit = 500): AsyncGenerator<T> {
    let next: string | null = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`;
    while (next) {
      const res = await this.send('GET', next);
      const items = await VersaApi.parse<T[]>(res);
      yield* items;
      const link = res.headers.get('link');
      next = link?.match(/<([^>]+)>;\s*rel="next"/)?.[1] ?? null;
    }
  }

  /**
   * Multipart upload of files from disk, each read in chunks as it is sent (`createReadStream`), so memory stays flat
   * in the file size (fetch's FormData reads a file-backed Blob whole: 458 MB more for a 512 MB file, measured by
   * bench/cli-upload.ts). The body is made anew for a retry.
   */
  async upload<T = any>(path: string, fields: Record<string, string | undefined>, fileField: string, files: string[]): Promise<T> {
    const parts = files.map((file) => ({ field: fileField, filename: basename(file), type: 'application/octet-stream', data: () => createReadStream(file) }));
    return VersaApi.parse<T>(await this.send('POST', path, () => multipart(fields, parts)));
  }

  /**
   * Multipart upload of one part produced as a stream (a zip written while it is sent), with text fields before it.
   * Sent chunked; never retried, since the stream cannot be read twice.
   */
  async uploadStream<T = any>(path: string, fields: Record<string, string | undefined>, fileField: string, filename: string, stream: AsyncIterable<Uint8Array>): Promise<T> {
    const parts = [{ field: fileField, filename, type: 'application/zip', data: () => stream }];
    return VersaApi.parse<T>(await this.send('POST', path, () => multipart(fields, parts), false));
  }

  /**
   * Streams a download to `destination` (written beside it, renamed when complete, so a failed download leaves no
   * partial file), calling `progress(done, total)` as bytes arrive.
   */
  async download(path: string, destination: string, progress?: (done: number, total: number) => void): Promise<number> {
    const res = await this.send('GET', path);
    if (!res.ok || !res.body) await VersaApi.parse(res);
    const total = Number(res.headers.get('content-length') ?? 0);
    let done = 0;
    const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
    body.on('data', (chunk: Buffer) => {
      done += chunk.length;
      progress?.(done, total);
    });
    const partial = `${destination}.part`;
    try {
      await pipeline(body, createWriteStream(partial));
      await rename(partial, destination);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return done;
  }
}

interface Part {
  field: string;
  filename: string;
  type: string;
  data: () => AsyncIterable<Uint8Array>;
}

/** A multipart/form-data body as a stream: the text fields, then each part's bytes as its source yields them. */
function multipart(fields: Record<string, string | undefined>, parts: Part[]): { body: Readable; headers: Record<string, string> } {
  const boundary = `----versa${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const enc = new TextEncoder();
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined) yield enc.encode(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    }
    for (const part of parts) {
      yield enc.encode(`--${boundary}\r\ncontent-disposition: form-data; name="${part.field}"; filename="${part.filename.replace(/["\r\n]/g, '_')}"\r\ncontent-type: ${part.type}\r\n\r\n`);
      yield* part.data();
      yield enc.encode('\r\n');
    }
    yield enc.encode(`--${boundary}--\r\n`);
  }
  return { body: Readable.from(body()), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/**
 * Sends a streamed body with node:http(s), which waits for the socket to drain: fetch reads a streamed request body
 * ahead without bound (Node 20 and 22: 600 MB resident sending a 512 MB file, against 80 MB this way), so a big upload
 * would sit in memory. The answer comes back as a fetch Response, so callers read it as any other.
 */
async function streamRequest(method: string, url: string, headers: Record<string, string>, body: Readable): Promise<Response> {
  const { request } = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise<Response>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const answer = new Headers();
      for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(', ') : value);
      const empty = res.statusCode === 204 || res.statusCode === 304;
      resolve(new Response(empty ? null : (Readable.toWeb(res) as unknown as BodyInit), { status: res.statusCode ?? 0, headers: answer }));
    });
    req.on('error', (error) => reject(Object.assign(new Error(error.message), { cause: error })));
    pipeline(body, req).catch(reject);
  });
}
