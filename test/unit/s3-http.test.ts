/**
 * The S3 requests Versa signs and sends itself (src/storage/s3-http.ts, issue 27): the signature against AWS's own
 * worked example, the addressing styles, and — against a local HTTP server that answers as S3 does — what is sent,
 * retries, error mapping and streamed reads. The same store against a real S3 server: test/storage/.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, mock } from 'node:test';
import type { S3BlobStoreConfig } from '../../src/config.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import { S3Bucket } from '../../src/storage/s3-bucket.js';
import { S3Http } from '../../src/storage/s3-http.js';

const example = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };

describe('S3 request signing and addressing', () => {
  it('signs AWS\'s documented GET Object example (virtual-hosted) to its published signature', async () => {
    // https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "Example: GET Object".
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2013-05-24T00:00:00Z') });
    try {
      const http = new S3Http({ endpoint: 'https://s3.amazonaws.com', region: 'us-east-1', forcePathStyle: false, bucket: 'examplebucket', credentials: example });
      const signed = await http.signed({ method: 'GET', key: 'test.txt', headers: { range: 'bytes=0-9' } });
      assert.equal(signed.hostname, 'examplebucket.s3.amazonaws.com');
      assert.equal(signed.path, '/test.txt');
      assert.equal(signed.headers.host, 'examplebucket.s3.amazonaws.com');
      assert.equal(signed.headers['x-amz-date'], '20130524T000000Z');
      assert.equal(
        signed.headers.authorization,
        'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
      );
    } finally {
      mock.timers.reset();
    }
  });

  it('path-style puts the bucket in the path (and keeps the port); AWS by region when no endpoint; keys percent-encoded', async () => {
    const path = await new S3Http({ endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', forcePathStyle: true, bucket: 'b', credentials: example }).signed({ method: 'GET', key: 'a/x y$+.jpg' });
    assert.deepEqual([path.hostname, path.path, path.headers.host], ['127.0.0.1', '/b/a/x%20y%24%2B.jpg', '127.0.0.1:9000']);
    const part = await new S3Http({ endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', forcePathStyle: true, bucket: 'b', credentials: example }).signed({ method: 'PUT', key: 'k', query: { partNumber: '2', uploadId: '2~a/b+c' }, body: Buffer.from('x') });
    assert.equal(part.path, '/b/k?partNumber=2&uploadId=2~a%2Fb%2Bc');
    const aws = await new S3Http({ endpoint: null, region: 'eu-west-1', forcePathStyle: false, bucket: 'photos', credentials: example }).signed({ method: 'HEAD', key: 'k' });
    assert.deepEqual([aws.hostname, aws.path], ['photos.s3.eu-west-1.amazonaws.com', '/k']);
    assert.match(aws.headers.authorization, /\/eu-west-1\/s3\/aws4_request/);
    // A bucket name that cannot be a host name (dots break https certificates) is addressed by path.
    const dotted = await new S3Http({ endpoint: null, region: 'eu-west-1', forcePathStyle: false, bucket: 'my.photos', credentials: example }).signed({ method: 'HEAD', key: 'k' });
    assert.deepEqual([dotted.hostname, dotted.path], ['s3.eu-west-1.amazonaws.com', '/my.photos/k']);
  });

  it('sends a session token with the request it signs', async () => {
    const http = new S3Http({ endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', forcePathStyle: true, bucket: 'b', credentials: { ...example, sessionToken: 'tok' } });
    const signed = await http.signed({ method: 'GET', key: 'k' });
    assert.equal(signed.headers['x-amz-security-token'], 'tok');
    assert.match(signed.headers.authorization, /SignedHeaders=[^,]*x-amz-security-token/);
  });

  it('without configured keys, signs with what the AWS SDK\'s default chain finds (here the environment)', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDFROMCHAIN', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'chain-token' });
    try {
      const http = new S3Http({ endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', forcePathStyle: true, bucket: 'b', credentials: null });
      const signed = await http.signed({ method: 'GET', key: 'k' });
      assert.match(signed.headers.authorization, /Credential=AKIDFROMCHAIN\//);
      assert.equal(signed.headers['x-amz-security-token'], 'chain-token');
    } finally {
      process.env = saved;
    }
  });
});

type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse) => void;

/** A local server that records each request and answers with the next handler (the last one repeats). */
function fakeS3() {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: Buffer }> = [];
  let handlers: Handler[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    (handlers.length > 1 ? handlers.shift()! : handlers[0])(req, body, res);
  });
  return {
    server,
    seen,
    answer(...next: Handler[]) {
      handlers = next;
      seen.length = 0;
    },
    config(): S3BlobStoreConfig {
      const { port } = server.address() as AddressInfo;
      return { kind: 's3', bucket: 'bkt', prefix: 'pre', endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, checksums: 'WHEN_REQUIRED', credentials: example };
    },
  };
}

const xmlError = (status: number, code: string, message = code): Handler => (_req, _body, res) => {
  res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
};
const ok: Handler = (_req, _body, res) => res.writeHead(200).end();
const reset: Handler = (req) => req.socket.destroy();

describe('S3 store over a local server that answers as S3 does', () => {
  const s3 = fakeS3();
  let store: S3BlobStore;
  before(async () => {
    await new Promise<void>((resolve) => s3.server.listen(0, '127.0.0.1', resolve));
    store = new S3BlobStore(s3.config());
  });
  after(() => s3.server.close());

  it('a PUT carries the bytes, their length and their SHA-256, signed; the key under the prefix, path-style', async () => {
    s3.answer(ok);
    const data = Buffer.from('some image bytes');
    await store.put('projects/1/images/a.jpg', data);
    assert.equal(s3.seen.length, 1);
    const [put] = s3.seen;
    assert.deepEqual([put.method, put.url, put.body], ['PUT', '/bkt/pre/projects/1/images/a.jpg', data]);
    assert.equal(put.headers['content-length'], String(data.length));
    assert.equal(put.headers['x-amz-content-sha256'], createHash('sha256').update(data).digest('hex'));
    assert.match(put.headers.authorization!, /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=content-length;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
  });

  it('retries 503 SlowDown, 500 and a dropped connection, three attempts in all', async () => {
    s3.answer(xmlError(503, 'SlowDown'), reset, ok);
    await store.put('projects/1/images/a.jpg', Buffer.from('x'));
    assert.equal(s3.seen.length, 3);
    assert.ok(s3.seen.every((r) => r.body.toString() === 'x'), 'every attempt sends the whole body');
    s3.answer(xmlError(500, 'InternalError', 'We encountered an internal error.'));
    await assert.rejects(store.put('projects/1/images/a.jpg', Buffer.from('x')), (err: Error & { $metadata: { httpStatusCode: number } }) => {
      assert.deepEqual([err.name, err.message, err.$metadata.httpStatusCode], ['InternalError', 'We encountered an internal error.', 500]);
      return true;
    });
    assert.equal(s3.seen.length, 3);
  });

  it('maps errors as the SDK did, without retrying them: NoSuchKey is a missing blob, NoSuchBucket and AccessDenied are not', async () => {
    s3.answer(xmlError(404, 'NoSuchKey', 'The specified key does not exist.'));
    await assert.rejects(store.get('projects/1/images/none.jpg'), { code: 'ENOENT' });
    await assert.rejects(async () => { for await (const _ of store.stream('projects/1/images/none.jpg')) void _; }, { code: 'ENOENT' });
    assert.equal(s3.seen.length, 2);
    s3.answer(xmlError(404, 'NoSuchBucket', 'The specified bucket does not exist'));
    await assert.rejects(store.get('projects/1/images/a.jpg'), (err: NodeJS.ErrnoException) => err.name === 'NoSuchBucket' && err.code !== 'ENOENT');
    s3.answer(xmlError(403, 'AccessDenied', 'Access Denied'));
    await assert.rejects(store.put('projects/1/images/a.jpg', Buffer.from('x')), { name: 'AccessDenied', message: 'Access Denied' });
    await assert.rejects(store.size('projects/1/images/a.jpg'), { name: 'Forbidden' });
    assert.equal(s3.seen.length, 2);
    s3.answer((req, _body, res) => res.writeHead(req.method === 'DELETE' ? 204 : 404).end()); // S3 deletes a missing key with 204
    assert.equal(await store.size('projects/1/images/none.jpg'), null);
    await store.delete('projects/1/images/none.jpg');
    assert.deepEqual(s3.seen.map((r) => r.method), ['HEAD', 'DELETE']);
  });

  it('size reads Content-Length from HEAD; a range is asked with a Range header', async () => {
    s3.answer((_req, _body, res) => res.writeHead(200, { 'content-length': '1234' }).end());
    assert.equal(await store.size('projects/1/images/a.jpg'), 1234);
    s3.answer((_req, _body, res) => res.writeHead(206).end('cd'));
    const chunks: Buffer[] = [];
    for await (const chunk of store.stream('projects/1/images/a.jpg', { start: 2, end: 3 })) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), 'cd');
    assert.equal(s3.seen[0].headers.range, 'bytes=2-3');
  });

  it('a stream gives its first bytes before the object has all arrived (nothing buffered whole)', async () => {
    let finish!: () => void;
    s3.answer((_req, _body, res) => {
      res.writeHead(200);
      res.write('first part ');
      finish = () => res.end('second part');
    });
    const stream = store.stream('projects/1/images/big.bin');
    const chunks: string[] = [];
    for await (const chunk of stream) {
      chunks.push(String(chunk));
      if (chunks.length === 1) finish();
    }
    assert.deepEqual(chunks.join(''), 'first part second part');
    assert.equal(chunks[0], 'first part ');
  });

  it('a stream read to its end aborts nothing; one cut mid-body fails; one its reader leaves ends its request', async () => {
    // An export reads hundreds of blobs: aborting each finished request cost a DOMException with its stack (issue 27).
    s3.answer((_req, _body, res) => res.writeHead(200).end('whole body'));
    const aborts = mock.method(AbortController.prototype, 'abort');
    try {
      const chunks: Buffer[] = [];
      const stream = store.stream('projects/1/images/a.jpg');
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(Buffer.concat(chunks).toString(), 'whole body');
      assert.equal(aborts.mock.callCount(), 0, 'a finished GET was aborted');
    } finally {
      aborts.mock.restore();
    }

    s3.answer((req, _body, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part');
      setTimeout(() => req.socket.destroy(), 10);
    });
    await assert.rejects(async () => { for await (const _ of store.stream('projects/1/images/cut.jpg')) void _; }, { code: 'ECONNRESET' });

    let closed!: () => void;
    const serverSawClose = new Promise<void>((resolve) => (closed = resolve));
    s3.answer((_req, _body, res) => {
      res.writeHead(200);
      res.write('first part ');
      res.once('close', () => closed());
    });
    for await (const _ of store.stream('projects/1/images/left.jpg')) break;
    await serverSawClose;
  });

  it('a project bucket reads only while the ETag matches: If-Match sent, 412 reads as missing, each read counted', async () => {
    const { endpoint } = s3.config();
    const bucket = new S3Bucket({ endpoint: endpoint!, region: 'us-east-1', forcePathStyle: true, bucket: 'user-bucket', prefix: 'cams', credentials: example });
    s3.answer(xmlError(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold'));
    await assert.rejects(bucket.get('cams/a b.jpg', '"abc"'), { code: 'ENOENT' });
    s3.answer((_req, _body, res) => res.writeHead(412).end());
    assert.equal(await bucket.size('cams/a b.jpg', '"abc"'), null);
    assert.equal(bucket.requests, 2);
    assert.equal(s3.seen[0].headers['if-match'], '"abc"');
    assert.equal(s3.seen[0].url, '/user-bucket/cams/a%20b.jpg');
    bucket.destroy();
  });
});
