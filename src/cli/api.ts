import { createWriteStream, openAsBlob } from 'node:fs';
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
type BodyFactory = () => { body: string | FormData | Readable; headers: Record<string, string> };

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
      let body: BodyInit | undefined;
      if (made) {
        Object.assign(headers, made.headers);
        body = made.body instanceof Readable ? (Readable.toWeb(made.body) as unknown as BodyInit) : made.body;
      }
      let res: Response;
      try {
        res = await fetch(this.baseUrl + path, { method, headers, body, ...(made?.body instanceof Readable ? { duplex: 'half' } : {}) } as RequestInit);
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
   * Multipart upload of files from disk. Each file is a file-backed Blob (`openAsBlob`): fetch reads it in chunks as
   * it sends, so no file is ever held in memory whole, and a retry can send it again.
   */
  async upload<T = any>(path: string, fields: Record<string, string | undefined>, fileField: string, files: string[]): Promise<T> {
    const blobs = await Promise.all(files.map((file) => openAsBlob(file)));
    const make: BodyFactory = () => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, value);
      files.forEach((file, i) => form.append(fileField, blobs[i], basename(file)));
      return { body: form, headers: {} };
    };
    return VersaApi.parse<T>(await this.send('POST', path, make));
  }

  /**
   * Multipart upload of one part produced as a stream (a zip written while it is sent), with text fields before it.
   * Sent chunked; never retried, since the stream cannot be read twice.
   */
  async uploadStream<T = any>(path: string, fields: Record<string, string | undefined>, fileField: string, filename: string, stream: AsyncIterable<Uint8Array>): Promise<T> {
    const boundary = `----versa${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
    async function* body(): AsyncGenerator<Uint8Array> {
      const enc = new TextEncoder();
      for (const [name, value] of Object.entries(fields)) {
        if (value === undefined) continue;
        yield enc.encode(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
      }
      yield enc.encode(`--${boundary}\r\ncontent-disposition: form-data; name="${fileField}"; filename="${filename.replace(/["\r\n]/g, '_')}"\r\ncontent-type: application/zip\r\n\r\n`);
      yield* stream;
      yield enc.encode(`\r\n--${boundary}--\r\n`);
    }
    const make: BodyFactory = () => ({ body: Readable.from(body()), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    return VersaApi.parse<T>(await this.send('POST', path, make, false));
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
