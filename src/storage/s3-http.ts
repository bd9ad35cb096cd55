import { createHash, createHmac } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { PassThrough, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/** Where requests go: the endpoint (null: AWS), the region, the addressing style, the bucket and the credentials. */
export interface S3Target {
  readonly endpoint: string | null;
  readonly region: string;
  readonly forcePathStyle: boolean;
  readonly bucket: string;
  /** Null: the AWS SDK's default chain (environment, profile, instance role…), cached and refreshed before expiry. */
  readonly credentials: AwsCredentialIdentity | null;
}

export interface S3ObjectRequest {
  readonly method: 'GET' | 'HEAD' | 'PUT' | 'DELETE';
  /** The object's whole key in the bucket. */
  readonly key: string;
  /** Query parameters (a part upload's `partNumber` and `uploadId`). */
  readonly query?: Record<string, string>;
  readonly headers?: Record<string, string>;
  /** A PUT's bytes, whole or as the chunks they arrived in (sent one after another, never concatenated): sent with
   *  their SHA-256 signed, so the server refuses bytes damaged on the way. */
  readonly body?: Uint8Array | readonly Uint8Array[];
  readonly signal?: AbortSignal;
}

/** An S3 error in the shape the AWS SDK gives its errors: `name` is S3's code, `$metadata.httpStatusCode` the status. */
export class S3Error extends Error {
  readonly $metadata: { httpStatusCode: number };

  constructor(name: string, message: string, status: number) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode: status };
  }
}

const ATTEMPTS = 3;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
/** One pool of kept-alive connections per protocol for the whole process (the SDK's default is 50 sockets too). */
const agents = { 'http:': new http.Agent({ keepAlive: true, maxSockets: 50 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 50 }) };
/** Names S3 gives to answers worth another try besides any 5xx; and the socket errors a retry cures. */
const RETRY_NAMES = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestTimeout', 'RequestTimeTooSkewed', 'TooManyRequests']);
const RETRY_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/**
 * The per-object S3 requests (GET, HEAD, DELETE, PUT of an object or of a multipart part) signed with Signature V4
 * and sent over Node's HTTP on kept-alive connections: the AWS SDK's client costs about 2 ms of CPU per request, three
 * to four times this (bench/s3-client-cost.ts, issue 27). Virtual-hosted addressing unless `forcePathStyle` (or a
 * bucket name that cannot be a host name); failed attempts are retried as the SDK's standard mode does (3 attempts,
 * exponential backoff with jitter) on 5xx, throttling and dropped connections; other errors come back at once.
 */
export class S3Http {
  private readonly url: URL;
  private readonly signer: SignatureV4;
  private readonly pathStyle: boolean;

  constructor(private readonly target: S3Target) {
    this.url = new URL(target.endpoint ?? `https://s3.${target.region}.amazonaws.com`);
    this.pathStyle = target.forcePathStyle || !/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(target.bucket);
    this.signer = new SignatureV4({ credentials: credentialsOf(target), region: target.region, service: 's3', sha256: NodeHash, uriEscapePath: false });
  }

  /** The response to a request that succeeded (2xx), its body unread; an S3Error (or the socket's error) otherwise. */
  async send(request: S3ObjectRequest): Promise<IncomingMessage> {
    const headers = headersOf(request);
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(request, headers).catch((err: Error) => err);
      if (!(outcome instanceof Error)) return outcome;
      if (attempt >= ATTEMPTS || !retryable(outcome) || request.signal?.aborted) throw outcome;
      await sleep(Math.random() * 100 * 2 ** attempt, undefined, { signal: request.signal });
    }
  }

  /** A request whose answer's body does not matter (HEAD, PUT, DELETE): the answer's headers. */
  async headers(request: S3ObjectRequest): Promise<IncomingHttpHeaders> {
    const res = await this.send(request);
    res.resume();
    return res.headers;
  }

  /** A GET's body, whole. */
  async bytes(request: S3ObjectRequest): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.send(request)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** A GET's body as it arrives; closing the stream early ends the request. A failure is `failed(error)`. */
  stream(request: Omit<S3ObjectRequest, 'signal'>, failed: (err: unknown) => Error): Readable {
    const out = new PassThrough();
    const abort = new AbortController();
    // Only a body not read to its end is aborted. Piped by hand: `pipeline` and an abort after the end each make a
    // DOMException with its stack, about 0.1 ms of CPU a GET between them (an export's 200 GETs, issue 27).
    let ended = false;
    out.once('close', () => ended || abort.abort());
    this.send({ ...request, signal: abort.signal })
      .then((res) => {
        let error: Error | undefined;
        res.once('error', (err) => (error = err));
        res.once('end', () => (ended = true));
        res.once('close', () => ended || out.destroy(failed(error ?? Object.assign(new Error('the S3 response ended before its body'), { code: 'ECONNRESET' }))));
        res.pipe(out);
      })
      .catch((err) => out.destroy(failed(err)));
    return out;
  }

  /** The request as it goes out: the host it goes to, its path, and its headers with the signature. */
  async signed(request: S3ObjectRequest, headers = headersOf(request)): Promise<{ hostname: string; path: string; headers: Record<string, string> }> {
    const hostname = this.pathStyle ? this.url.hostname : `${this.target.bucket}.${this.url.hostname}`;
    const host = this.url.port ? `${hostname}:${this.url.port}` : hostname;
    const path = `${this.url.pathname.replace(/\/$/, '')}${this.pathStyle ? `/${this.target.bucket}` : ''}/${encodeKey(request.key)}`;
    const query = request.query ?? {};
    const signed = await this.signer.sign({ method: request.method, protocol: this.url.protocol, hostname, path, query, headers: { ...headers, host } });
    const search = Object.entries(query).map(([name, value]) => `${encodeSegment(name)}=${encodeSegment(value)}`).join('&');
    return { hostname, path: search ? `${path}?${search}` : path, headers: signed.headers };
  }

  private async attempt(request: S3ObjectRequest, headers: Record<string, string>): Promise<IncomingMessage> {
    const signed = await this.signed(request, headers);
    const protocol = this.url.protocol === 'https:' ? https : http;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = protocol.request({
        agent: agents[this.url.protocol as 'http:' | 'https:'], method: request.method, host: signed.hostname, port: this.url.port || undefined,
        path: signed.path, headers: signed.headers, signal: request.signal,
      }, resolve);
      req.once('error', reject);
      req.cork(); // the chunks go out in as few writes as the socket takes
      for (const chunk of chunksOf(request.body)) req.write(chunk);
      req.end();
    });
    if (res.statusCode! < 300) return res;
    throw await errorOf(res, request.method);
  }
}

/** The request's own headers and its payload's SHA-256 (and length, for a body). */
function headersOf({ headers, body }: S3ObjectRequest): Record<string, string> {
  if (!body) return { ...headers, 'x-amz-content-sha256': EMPTY_SHA256 };
  const hash = createHash('sha256');
  let length = 0;
  for (const chunk of chunksOf(body)) (hash.update(chunk), (length += chunk.length));
  return { ...headers, 'x-amz-content-sha256': hash.digest('hex'), 'content-length': String(length) };
}

const chunksOf = (body: S3ObjectRequest['body']): readonly Uint8Array[] => (body === undefined ? [] : body instanceof Uint8Array ? [body] : body);

/** The error an answer other than 2xx stands for: S3's `Code` and `Message` from its XML body (HEAD has none). */
async function errorOf(res: IncomingMessage, method: string): Promise<S3Error> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const xml = Buffer.concat(chunks).toString('utf8');
  const status = res.statusCode!;
  const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1] ?? BODYLESS[status] ?? `HTTP${status}`;
  const message = /<Message>([^<]*)<\/Message>/.exec(xml)?.[1] ?? `${method} answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`;
  return new S3Error(code, message, status);
}

/** The names the AWS SDK gives answers without a body (a HEAD's). */
const BODYLESS: Record<number, string> = { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 412: 'PreconditionFailed', 503: 'SlowDown' };

const retryable = (err: Error): boolean =>
  err instanceof S3Error
    ? err.$metadata.httpStatusCode >= 500 || err.$metadata.httpStatusCode === 429 || RETRY_NAMES.has(err.name)
    : RETRY_CODES.has((err as NodeJS.ErrnoException).code ?? '');

/** Percent-encoded as RFC 3986 says (as the signature encodes it). */
const encodeSegment = (text: string): string => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** A key as S3 wants it in a path: each segment encoded, the slashes kept. */
const encodeKey = (key: string): string => key.split('/').map(encodeSegment).join('/');

function credentialsOf(target: S3Target): AwsCredentialIdentity | AwsCredentialIdentityProvider {
  if (target.credentials) return target.credentials;
  // The SDK's chain memoises what it finds and fetches anew five minutes before it expires.
  let chain: Promise<AwsCredentialIdentityProvider> | undefined;
  return async () => {
    chain ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => defaultProvider());
    return (await chain)();
  };
}

type Bytes = string | ArrayBuffer | ArrayBufferView;
const toBytes = (data: Bytes): string | Uint8Array =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);

/** node:crypto's SHA-256 (an HMAC when given a secret) in the shape the signer expects. */
export class NodeHash {
  private readonly hash;

  constructor(secret?: Bytes) {
    this.hash = secret ? createHmac('sha256', toBytes(secret)) : createHash('sha256');
  }

  update(data: Bytes): void {
    this.hash.update(toBytes(data));
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}
