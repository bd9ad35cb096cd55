/** The whole app on the S3 store (runs under `npm run test:s3`): files go to the bucket, none to DATA_DIR/blobs. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import type { TestApp } from '../helpers/test-app.js';
import { s3Env, s3Skip, s3TestBucket, type TestBucket } from './s3-env.js';

describe('the app with BLOB_STORE=s3://…', { skip: s3Skip }, () => {
  let t: TestApp;
  let bucket: TestBucket;
  before(async () => {
    const env = s3Env();
    bucket = await s3TestBucket(env);
    // Loaded here: the whole app takes seconds to load, for nothing where the suite skips.
    t = await (await import('../helpers/test-app.js')).startTestApp(env);
  });
  after(async () => {
    await t?.close();
    await bucket?.empty();
  });

  it('stores an upload and its thumbnail in the bucket and serves both back; deleting the project empties its prefix', async () => {
    const alice = await t.user();
    const project = await alice.post('/api/projects', { name: 'on s3' });
    assert.equal(project.status, 201);
    const data = await sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 200, g: 30, b: 30 } } }).jpeg().toBuffer();
    const { payload, headers } = multipart([{ filename: 'red.jpg', data, contentType: 'image/jpeg' }]);
    const res = await alice.request({ method: 'POST', url: `/api/projects/${project.body.id}/images`, payload, headers });
    assert.equal(res.status, 201);
    const image = res.body.images[0];

    const stored = await bucket.objects();
    assert.equal(stored.length, 2, `the image and its thumbnail, got ${stored.join(', ')}`);
    assert.ok(stored.some((key) => key.endsWith(`/images/${image.sha256}.jpg`)));
    assert.ok(stored.some((key) => key.endsWith(`/thumbs/${image.sha256}.webp`)));
    assert.equal(existsSync(join(t.dataDir, 'blobs')), false);

    const file = await alice.get(`/api/projects/${project.body.id}/images/file/${image.filename}`);
    assert.equal(file.status, 200);
    assert.deepEqual(file.raw, data);
    const thumb = await alice.get(`/api/images/${image.id}/thumbnail`);
    assert.equal(thumb.status, 200);
    assert.equal(thumb.headers['content-type'], 'image/webp');
    const meta = await sharp(thumb.raw).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 256, 171]);

    assert.equal((await alice.delete(`/api/projects/${project.body.id}`)).status, 204);
    assert.deepEqual(await bucket.objects(), []);
  });
});
