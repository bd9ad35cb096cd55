/**
 * On a real S3 server (`npm run test:s3`): a PUT signed by src/storage/s3-http.ts carries its body's SHA-256, so bytes
 * damaged on the way are refused and nothing is stored (what Content-MD5 did when the SDK sent the PUTs, issue 27).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import { S3Http } from '../../src/storage/s3-http.js';
import { s3Skip, s3TestBucket } from './s3-env.js';

describe('S3 PUT signed with its SHA-256', { skip: s3Skip }, () => {
  it('is refused when the bytes that arrive are not the bytes signed, and stores nothing', async () => {
    const bucket = await s3TestBucket();
    const { config } = bucket;
    const s3 = new S3Http(config);
    const key = `${config.prefix}/projects/1/images/a.jpg`;
    const signed = await s3.signed({ method: 'PUT', key, body: Buffer.from('the bytes as signed') });
    const endpoint = new URL(config.endpoint!);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: signed.hostname, port: endpoint.port, method: 'PUT', path: signed.path, headers: signed.headers }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end(Buffer.from('the bytes as SIGNED'));
    });
    assert.equal(answer.status, 400);
    assert.match(answer.body, /<Code>XAmzContentSHA256Mismatch<\/Code>/);
    const store = new S3BlobStore(config);
    assert.equal(await store.size('projects/1/images/a.jpg'), null);
    await store.put('projects/1/images/a.jpg', Buffer.from('the bytes as signed'));
    assert.equal((await store.get('projects/1/images/a.jpg')).toString(), 'the bytes as signed');
    await bucket.empty();
  });
});
