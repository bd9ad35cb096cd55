import { createWriteStream, openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** An answer with a 4xx/5xx status; `detail` is the API's `detail` (a string or a list of {loc, msg, type}). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  }
}

/** The few API calls the command-line tool makes (fetch, bearer token). */
export class VersaApi {
  constructor(
    readonly baseUrl: string,
    public token: string | null = null,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async request<T = any>(method: string, path: string, body?: unknown, form?: FormData): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let payload: string | FormData | undefined;
    if (form) payload = form;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body: payload });
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

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }

  post<T = any>(path: string, body: unknown = {}) {
    return this.request<T>('POST', path, body);
  }

  /** Multipart upload: text fields and files (read from disk as blobs, not into memory at once). */
  async upload<T = any>(path: string, fields: Record<string, string | undefined>, fileField: string, files: string[]): Promise<T> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, value);
    for (const file of files) form.append(fileField, await openAsBlob(file), basename(file));
    return this.request<T>('POST', path, undefined, form);
  }

  /** Streams a download to `destination`, calling `progress(done, total)` as bytes arrive. */
  async download(path: string, destination: string, progress?: (done: number, total: number) => void): Promise<number> {
    const res = await fetch(this.baseUrl + path, { headers: this.token ? { authorization: `Bearer ${this.token}` } : {} });
    if (!res.ok || !res.body) throw new ApiError(res.status, await res.text(), null);
    const total = Number(res.headers.get('content-length') ?? 0);
    let done = 0;
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    body.on('data', (chunk: Buffer) => {
      done += chunk.length;
      progress?.(done, total);
    });
    await pipeline(body, createWriteStream(destination, { flags: 'wx' }));
    return done;
  }
}
