/**
 * Project storages against the real S3 server (runs under `npm run test:s3`, issue 27): a source bucket synced by
 * reference and by copy, twice (the second sync imports nothing new; deleted and replaced objects are reported), and a
 * target bucket that an export is written to. Objects are put into the bucket with the S3 client directly.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import type { TestApp } from '../helpers/test-app.js';
import { s3Env, s3Skip, s3TestBucket, type TestBucket } from './s3-env.js';

const KEY = 'b'.repeat(64);
const jpeg = (r: number, g: number, b: number) => sharp({ create: { width: 64, height: 48, channels: 3, background: { r, g, b } } }).jpeg().toBuffer();

describe('project storages on a real S3 server', { skip: s3Skip }, () => {
  let t: TestApp;
  let bucket: TestBucket;
  let endpoint: string;
  const put = (key: string, body: Buffer | string) => bucket.client.send(new PutObjectCommand({ Bucket: bucket.config.bucket, Key: `${bucket.config.prefix}/${key}`, Body: body }));
  const remove = (key: string) => bucket.client.send(new DeleteObjectCommand({ Bucket: bucket.config.bucket, Key: `${bucket.config.prefix}/${key}` }));
  const attach = (client: Awaited<ReturnType<TestApp['user']>>, projectId: number, body: Record<string, unknown>) => client.post(`/api/projects/${projectId}/storages`, {
    endpoint,
    bucket: bucket.config.bucket,
    access_key_id: bucket.config.credentials!.accessKeyId,
    secret_access_key: bucket.config.credentials!.secretAccessKey,
    ...body,
  });
  const sync = async (client: Awaited<ReturnType<TestApp['user']>>, url: string) => {
    const started = await client.post(`${url}/sync`);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    await t.versa.deps.queue.drain();
    const job = await client.get(`/api/jobs/${started.body.job_id}`);
    assert.equal(job.body.status, 'succeeded', JSON.stringify(job.body));
    return (await client.get(url)).body;
  };

  before(async () => {
    const env = s3Env();
    bucket = await s3TestBucket(env);
    endpoint = bucket.config.endpoint!;
    t = await (await import('../helpers/test-app.js')).startTestApp({ SECRETS_KEY: KEY, STORAGE_ALLOWLIST: endpoint, STORAGE_SYNC_CHECK_S: '1' });
  });
  after(async () => {
    await t?.close();
    await bucket?.empty();
  });

  it('imports by reference: originals read from the bucket, thumbnails kept; a second sync imports nothing, reports what went', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'by reference' })).body.id as number;
    const red = await jpeg(220, 20, 20);
    const green = await jpeg(20, 220, 20);
    await put('ref/cams/red.jpg', red);
    await put('ref/cams/green.jpg', green);
    await put('ref/blue.JPEG', await jpeg(20, 20, 220));
    await put('ref/notes.txt', 'not an image');
    const created = await attach(alice, projectId, { name: 'cams', prefix: `${bucket.config.prefix}/ref`, import_mode: 'reference' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const url = `/api/projects/${projectId}/storages/${created.body.id}`;
    const tested = await alice.post(`${url}/test`);
    assert.equal(tested.body.ok, true, tested.body.detail);
    assert.equal(tested.body.objects_seen, 1);

    const first = await sync(alice, url);
    assert.deepEqual(first.sync.counts, { listed: 4, new: 3, changed: 0, missing: 0, duplicates: 0, rejected: 0, skipped: 1 });
    assert.equal(first.sync.state, 'succeeded');
    assert.deepEqual(first.counts, { objects: 4, imported: 3, missing: 0 });
    const images = (await alice.get(`/api/projects/${projectId}/images?limit=10`)).body as { id: number; filename: string; sha256: string }[];
    assert.deepEqual(images.map((i) => i.filename).sort(), ['blue.jpg', 'green.jpg', 'red.jpg']);
    const redImage = images.find((i) => i.filename === 'red.jpg')!;
    const served = await alice.get(`/api/projects/${projectId}/images/file/red.jpg`);
    assert.equal(served.status, 200);
    assert.ok(served.raw.equals(red), 'the original is the bucket object');
    const thumb = await alice.get(`/api/images/${redImage.id}/thumbnail`);
    assert.equal(thumb.status, 200);
    const blobs = join(t.dataDir, 'blobs', 'projects', String(projectId));
    assert.ok(existsSync(join(blobs, 'thumbs', `${redImage.sha256}.webp`)), 'the thumbnail is in Versa\'s own store');
    assert.ok(!existsSync(join(blobs, 'images')), 'no original was copied');

    const second = await sync(alice, url);
    assert.deepEqual(second.sync.counts, { listed: 4, new: 0, changed: 0, missing: 0, duplicates: 0, rejected: 0, skipped: 0 });
    assert.equal(Number((await alice.get(`/api/projects/${projectId}/images`)).headers['x-total-count']), 3);

    await remove('ref/cams/red.jpg');
    await put('ref/cams/green.jpg', await jpeg(10, 120, 10));
    const third = await sync(alice, url);
    assert.deepEqual(third.sync.counts, { listed: 3, new: 0, changed: 1, missing: 1, duplicates: 0, rejected: 0, skipped: 0 });
    assert.equal(third.counts.missing, 1);
    const missing = await alice.get(`${url}/objects?missing=true`);
    assert.deepEqual(missing.body.map((o: { key: string; image_id: number }) => [o.key, o.image_id]), [[`${bucket.config.prefix}/ref/cams/red.jpg`, redImage.id]]);
    assert.equal(Number((await alice.get(`/api/projects/${projectId}/images`)).headers['x-total-count']), 4, 'missing objects keep their images; the changed one is a new image');
    // A missing original answers as a missing local file does (the store's ENOENT): never bytes.
    assert.notEqual((await alice.get(`/api/projects/${projectId}/images/file/red.jpg`)).status, 200, 'a deleted object is not served');
    const oldGreen = await alice.request({ method: 'GET', url: `/api/projects/${projectId}/images/file/green.jpg` });
    assert.notEqual(oldGreen.status, 200, 'a replaced object is not served as the image that was imported');

    // Deleting an image never deletes the user's object; detaching is refused while images point into the bucket.
    const blue = images.find((i) => i.filename === 'blue.jpg')!;
    assert.equal((await alice.delete(`/api/images/${blue.id}`)).status, 204);
    const head = await bucket.client.send(new HeadObjectCommand({ Bucket: bucket.config.bucket, Key: `${bucket.config.prefix}/ref/blue.JPEG` }));
    assert.ok(head.ContentLength! > 0);
    assert.equal((await alice.delete(url)).status, 409);
  });

  it('imports by copy: the bytes are Versa\'s, and stay when the object goes', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'by copy' })).body.id as number;
    const gray = await jpeg(128, 128, 128);
    await put('copy/gray.png.jpg', gray);
    const created = await attach(alice, projectId, { name: 'copies', prefix: `${bucket.config.prefix}/copy`, import_mode: 'copy' });
    const url = `/api/projects/${projectId}/storages/${created.body.id}`;
    const first = await sync(alice, url);
    assert.equal(first.sync.counts.new, 1);
    const [image] = (await alice.get(`/api/projects/${projectId}/images`)).body;
    assert.ok(existsSync(join(t.dataDir, 'blobs', 'projects', String(projectId), 'images', `${image.sha256}.jpg`)));
    await remove('copy/gray.png.jpg');
    const second = await sync(alice, url);
    assert.equal(second.sync.counts.missing, 1);
    const served = await alice.get(`/api/projects/${projectId}/images/file/${image.filename}`);
    assert.equal(served.status, 200);
    assert.ok(served.raw.equals(gray));
    assert.equal((await alice.delete(url)).status, 204, 'nothing points into the bucket');
  });

  it('syncs on its schedule: a due storage is synced by the process that claims it', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'scheduled' })).body.id as number;
    await put('sched/one.jpg', await jpeg(1, 2, 3));
    const created = await attach(alice, projectId, { name: 'hourly', prefix: `${bucket.config.prefix}/sched`, sync_interval_minutes: 60 });
    assert.equal(created.body.sync.state, 'never');
    assert.ok(Date.parse(created.body.next_sync_at) > Date.now());
    // Due now: the next check (every second here) starts it.
    await t.versa.database.db.updateTable('project_storages').set({ next_sync_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', created.body.id).execute();
    const url = `/api/projects/${projectId}/storages/${created.body.id}`;
    let storage = (await alice.get(url)).body;
    for (let i = 0; i < 300 && storage.sync.state !== 'succeeded'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      storage = (await alice.get(url)).body;
    }
    assert.equal(storage.sync.state, 'succeeded');
    assert.equal(storage.sync.counts.new, 1);
    assert.ok(Date.parse(storage.next_sync_at) > Date.now() + 50 * 60_000, 'the next one an interval later');
  });

  it('writes an export to a target bucket', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'exported' })).body.id as number;
    const created = await attach(alice, projectId, { name: 'out', purpose: 'target', prefix: `${bucket.config.prefix}/out` });
    const url = `/api/projects/${projectId}/storages/${created.body.id}`;
    const tested = await alice.post(`${url}/test`);
    assert.equal(tested.body.ok, true, tested.body.detail);
    const written = await alice.post(`${url}/exports`, { format: 'coco' });
    assert.equal(written.status, 201, JSON.stringify(written.body));
    assert.equal(written.body.keys.length, 1);
    assert.match(written.body.keys[0], new RegExp(`^${bucket.config.prefix}/out/exports/exported-project-coco-[0-9a-f]{16}\\.json$`));
    const object = await bucket.client.send(new GetObjectCommand({ Bucket: bucket.config.bucket, Key: written.body.keys[0] }));
    const coco = JSON.parse(await object.Body!.transformToString());
    assert.ok(Array.isArray(coco.images));
    assert.equal(Number(object.ContentLength), written.body.bytes);
  });
});

describe('a version of images imported by reference, written to a target bucket', { skip: s3Skip }, () => {
  let t: TestApp;
  let bucket: TestBucket;
  before(async () => {
    bucket = await s3TestBucket(s3Env());
    t = await (await import('../helpers/test-app.js')).startTestApp({ SECRETS_KEY: KEY, STORAGE_ALLOWLIST: bucket.config.endpoint! });
  });
  after(async () => {
    await t?.close();
    await bucket?.empty();
  });

  it('generates the version from the bucket\'s originals and writes its files under versions/v1/', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'versioned' })).body.id as number;
    for (const [i, name] of ['a', 'b', 'c'].entries()) {
      await bucket.client.send(new PutObjectCommand({ Bucket: bucket.config.bucket, Key: `${bucket.config.prefix}/in/${name}.jpg`, Body: await jpeg(40 * i, 90, 200) }));
    }
    const credentials = { endpoint: bucket.config.endpoint, bucket: bucket.config.bucket, access_key_id: bucket.config.credentials!.accessKeyId, secret_access_key: bucket.config.credentials!.secretAccessKey };
    const source = (await alice.post(`/api/projects/${projectId}/storages`, { ...credentials, name: 'in', prefix: `${bucket.config.prefix}/in` })).body.id as number;
    const target = (await alice.post(`/api/projects/${projectId}/storages`, { ...credentials, name: 'out', purpose: 'target', prefix: `${bucket.config.prefix}/out` })).body.id as number;
    assert.equal((await alice.post(`/api/projects/${projectId}/storages/${source}/sync`)).status, 202);
    await t.versa.deps.queue.drain();
    const version = await alice.post(`/api/projects/${projectId}/versions`, { name: 'v' });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    await t.versa.deps.queue.drain();
    const versionId = version.body.id as number;
    assert.equal((await alice.get(`/api/projects/${projectId}/versions/${versionId}`)).body.status, 'ready');
    const written = await alice.post(`/api/projects/${projectId}/storages/${target}/versions/${versionId}`);
    assert.equal(written.status, 201, JSON.stringify(written.body));
    const images = written.body.keys.filter((k: string) => /\.(jpg|png|webp)$/.test(k));
    assert.equal(images.length, 3, JSON.stringify(written.body.keys));
    for (const key of written.body.keys) assert.ok(key.startsWith(`${bucket.config.prefix}/out/versions/v1/`), key);
    const listed = (await bucket.objects()).filter((k) => k.includes('/out/versions/v1/'));
    assert.deepEqual(listed.sort(), [...written.body.keys].sort());
    assert.equal((await alice.post(`/api/projects/${projectId}/storages/${source}/versions/${versionId}`)).status, 409, 'not to a source');
  });
});
