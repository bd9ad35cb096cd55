/**
 * Drills for hostile archives (issue 11, High 1, Medium 10, Low 12 and 15): limits on annotations and entries refuse
 * an archive with 413 naming the setting, before any project exists; a damaged entry (bad CRC-32) is 422 naming the
 * entry; error messages name paths inside the archive, never the server's temporary folder; a large COCO file is read
 * as a stream (the import holds neither the document nor its annotation list).
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 90, g: 120, b: 200 } } }).png().toBuffer();

function coco(annotations: number, images = 1): string {
  const parts = [`{"images":[${Array.from({ length: images }, (_, i) => `{"id":${i + 1},"file_name":"a${i}.png","width":32,"height":32}`).join(',')}],"categories":[{"id":1,"name":"box"}],"annotations":[`];
  for (let i = 0; i < annotations; i++) parts.push(`${i ? ',' : ''}{"id":${i + 1},"image_id":${(i % images) + 1},"category_id":1,"bbox":[${i % 20},${i % 17},5,6]}`);
  parts.push(']}');
  return parts.join('');
}

describe('import limits and hostile archives', () => {
  let t: TestApp;
  let alice: User;
  before(async () => {
    t = await startTestApp({ MAX_IMPORT_ANNOTATIONS: '50000', MAX_IMPORT_ENTRIES: '20' });
    alice = await t.user();
  });
  after(() => t.close());

  const importZip = (zip: Buffer) => {
    const { payload, headers } = multipart([{ name: 'file', filename: 'hostile.zip', data: zip, contentType: 'application/zip' }]);
    return alice.request({ method: 'POST', url: '/api/projects/import', payload, headers });
  };

  /** Nothing of a refused import remains: no project, no blobs, no temporary files. */
  async function assertNothingLeft(): Promise<void> {
    assert.equal((await alice.get('/api/projects')).body.length, 0);
    assert.deepEqual(await readdir(join(t.dataDir, 'blobs', 'projects')).catch(() => []), []);
    assert.deepEqual(await readdir(join(t.dataDir, 'tmp')).catch(() => []), []);
  }

  it('more annotations than MAX_IMPORT_ANNOTATIONS: 413 naming the limit, nothing stored', async () => {
    const res = await importZip(await buildZip([{ name: 'a0.png', data: png }, { name: 'annotations.json', data: coco(50_001) }]));
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.match(res.body.detail, /50000 annotations \(MAX_IMPORT_ANNOTATIONS\)/);
    await assertNothingLeft();
  });

  it('exactly MAX_IMPORT_ANNOTATIONS boxes on one image import, streamed, with exact counters', async () => {
    const res = await importZip(await buildZip([{ name: 'a0.png', data: png }, { name: 'annotations.json', data: coco(50_000) }]));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.annotation_count, 50_000);
    assert.equal(res.body.image_count, 1);
    assert.equal(res.body.annotated_image_count, 1);
    const images = await alice.get(`/api/projects/${res.body.id}/images`);
    assert.equal(images.body[0].annotation_count, 50_000);
    assert.equal((await alice.delete(`/api/projects/${res.body.id}`)).status, 204);
  });

  it('more entries than MAX_IMPORT_ENTRIES: 413 naming the limit, before anything is extracted', async () => {
    const entries = Array.from({ length: 21 }, (_, i) => ({ name: `labels/${i}.txt`, data: '' }));
    const res = await importZip(await buildZip([{ name: 'a0.png', data: png }, ...entries]));
    assert.equal(res.status, 413);
    assert.match(res.body.detail, /more than the limit of 20 \(MAX_IMPORT_ENTRIES\)/);
    await assertNothingLeft();
  });

  it('a COCO file listing more images than MAX_IMPORT_ENTRIES: 413', async () => {
    const res = await importZip(await buildZip([{ name: 'a0.png', data: png }, { name: 'annotations.json', data: coco(0, 21) }]));
    assert.equal(res.status, 413);
    assert.match(res.body.detail, /more than 20 images \(MAX_IMPORT_ENTRIES\)/);
    await assertNothingLeft();
  });

  it('an entry with a bad CRC-32: 422 naming the entry; nothing stored', async () => {
    const zip = await buildZip([{ name: 'a0.png', data: png, compress: false }, { name: 'annotations.json', data: coco(1) }]);
    // Flip one byte inside the stored (uncompressed) image: sizes still match, only the checksum tells.
    const start = zip.indexOf(png);
    assert.ok(start > 0, 'the image is stored as is');
    zip[start + png.length - 20] ^= 0xff;
    const res = await importZip(zip);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.detail, /zip entry "a0\.png" is damaged \(CRC-32 mismatch\)/);
    await assertNothingLeft();
  });

  it('errors name paths in the archive, never the server temporary folder', async () => {
    const missing = JSON.stringify({ images: [{ id: 1, file_name: 'nowhere.png' }], categories: [{ id: 1, name: 'x' }], annotations: [{ id: 1, image_id: 1, category_id: 1, bbox: [0, 0, 2, 2] }] });
    const broken = await buildZip([{ name: 'a0.png', data: Buffer.from('not an image at all') }, { name: 'annotations.json', data: JSON.stringify({ images: [{ id: 1, file_name: 'a0.png' }], categories: [{ id: 1, name: 'x' }], annotations: [{ id: 1, image_id: 1, category_id: 1, bbox: [0, 0, 2, 2] }] }) }]);
    for (const zip of [await buildZip([{ name: 'data/annotations.json', data: missing }, { name: 'data/other.png', data: png }]), broken]) {
      const res = await importZip(zip);
      assert.ok(res.status === 422 || res.status === 415, JSON.stringify(res.body));
      const text = JSON.stringify(res.body);
      assert.ok(!text.includes(t.dataDir), `no server path in ${text}`);
      assert.ok(!/versa-import-|\/tmp\//.test(text), `no temporary folder in ${text}`);
    }
    await assertNothingLeft();
  });

  it('a document that is not JSON, and sections that are not lists: 422', async () => {
    for (const doc of ['{"images": [{"id": 1, "file_name": "a0.png"}', '{"images": {"id": 1}, "annotations": [], "categories": []}']) {
      const res = await importZip(await buildZip([{ name: 'a0.png', data: png }, { name: 'annotations.json', data: doc }]));
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.match(res.body.detail, /annotations\.json( is not valid JSON|: "images" must be a list)/);
    }
    await assertNothingLeft();
  });
});
