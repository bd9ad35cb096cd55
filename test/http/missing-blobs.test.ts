import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * A row whose stored object is gone (removed from a bucket by hand, a volume restored from an older backup) answers
 * 404 with a `detail` that says so, never a 500 or a response cut off after its headers.
 */
describe('an object missing from the store', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<TestApp['user']>>;
  let projectId: number;
  let image: { id: number; filename: string; blob_key: string; thumbnail_key: string };
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'gone' })).body.id;
    const png = await sharp({ create: { width: 32, height: 24, channels: 3, background: { r: 9, g: 80, b: 200 } } }).png().toBuffer();
    const { payload, headers } = multipart([{ filename: 'a.png', contentType: 'image/png', data: png }]);
    const up = await owner.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload, headers });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const id = up.body.images[0].id;
    image = (await t.versa.database.db.selectFrom('images').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as never;
    await rm(join(t.dataDir, 'blobs', image.blob_key));
    await rm(join(t.dataDir, 'blobs', image.thumbnail_key));
  });
  after(() => t.close());

  it('answers 404 for the original and the thumbnail', async () => {
    for (const url of [`/api/projects/${projectId}/images/file/${image.filename}`, `/api/images/${image.id}/thumbnail`]) {
      const res = await owner.get(url);
      assert.equal(res.status, 404, `${url}: ${res.status} ${res.raw.toString().slice(0, 200)}`);
      assert.match(res.body.detail, /missing from storage/);
    }
  });

  it('still answers 304 to a client holding the bytes', async () => {
    const res = await owner.request({ method: 'GET', url: `/api/images/${image.id}/thumbnail`, headers: { 'if-none-match': `"${(await t.versa.database.db.selectFrom('images').select('sha256').where('id', '=', image.id).executeTakeFirstOrThrow()).sha256}"` } });
    assert.equal(res.status, 304);
  });
});
