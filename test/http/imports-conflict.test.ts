import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

let shade = 0;
const picture = (w: number, h: number) => {
  shade++;
  return sharp({ create: { width: w, height: h, channels: 3, background: { r: (shade * 53) % 256, g: (shade * 97) % 256, b: 90 } } }).jpeg().toBuffer();
};

/** A VoTT CSV dataset of two images and three boxes; `shift` moves the boxes of a.jpg (pixels). */
async function dataset(pictures: { a: Buffer; b: Buffer }, shift = 0) {
  const rows = [`"a.jpg",${10 + shift},10,40,30,"car"`, '"a.jpg",50,5,70,25,"person"', '"b.jpg",5,5,25,25,"car"'];
  return buildZip([
    { name: 'export/a.jpg', data: pictures.a },
    { name: 'export/b.jpg', data: pictures.b },
    { name: 'export/street-export.csv', data: `"image","xmin","ymin","xmax","ymax","label"\n${rows.join('\n')}\n` },
  ]);
}

function importInto(client: Client, projectId: number, zip: Buffer, fields: Record<string, string> = {}) {
  const { payload, headers } = multipart([{ name: 'file', filename: 'street.zip', data: zip, contentType: 'application/zip' }], fields);
  return client.request({ method: 'POST', url: `/api/projects/${projectId}/import`, payload, headers });
}

/** The project's counters equal its rows; each image's count equals its annotations. */
async function assertCountersExact(t: TestApp, projectId: number) {
  const db = t.versa.deps.db;
  const project = await db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
  const images = await db.selectFrom('images').select(['id', 'annotation_count']).where('project_id', '=', projectId).execute();
  const annotations = await db.selectFrom('annotations').select(['image_id']).where('project_id', '=', projectId).execute();
  const perImage = new Map<number, number>();
  for (const a of annotations) perImage.set(a.image_id, (perImage.get(a.image_id) ?? 0) + 1);
  assert.deepEqual([project.image_count, project.annotated_image_count, project.annotation_count], [images.length, perImage.size, annotations.length]);
  for (const image of images) assert.equal(image.annotation_count, perImage.get(image.id) ?? 0);
}

describe('imports-conflict: importing an archive into a project that already holds it', () => {
  let t: TestApp;
  let alice: Client;
  let pictures: { a: Buffer; b: Buffer };
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    pictures = { a: await picture(80, 40), b: await picture(30, 30) };
  });
  after(() => t.close());

  async function projectWithDataset() {
    const project = await alice.post('/api/projects', { name: `target ${++shade}` });
    const first = await importInto(alice, project.body.id, await dataset(pictures));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.annotations_created, 3);
    assert.deepEqual(first.body.conflicts, { on_conflict: 'skip', matched: 0, skipped: 0, replaced: 0 });
    return project.body.id as number;
  }

  it('imports-conflict skip (default): the same archive again adds no box; the answer counts them as matched and skipped', async () => {
    const projectId = await projectWithDataset();
    const again = await importInto(alice, projectId, await dataset(pictures));
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.images_merged, 2);
    assert.equal(again.body.annotations_created, 0);
    assert.deepEqual(again.body.conflicts, { on_conflict: 'skip', matched: 3, skipped: 3, replaced: 0 });
    assert.equal(again.body.project.annotation_count, 3, 'not doubled');
    await assertCountersExact(t, projectId);
  });

  it('imports-conflict skip: within 0.5 px is the same box, 2 px off is another one', async () => {
    const projectId = await projectWithDataset();
    const close = await importInto(alice, projectId, await dataset(pictures, 0.4));
    assert.deepEqual(close.body.conflicts, { on_conflict: 'skip', matched: 3, skipped: 3, replaced: 0 });
    const far = await importInto(alice, projectId, await dataset(pictures, 2));
    assert.equal(far.status, 201, JSON.stringify(far.body));
    assert.deepEqual(far.body.conflicts, { on_conflict: 'skip', matched: 2, skipped: 2, replaced: 0 });
    assert.equal(far.body.annotations_created, 1);
    assert.equal(far.body.project.annotation_count, 4);
    await assertCountersExact(t, projectId);
  });

  it('imports-conflict replace: the images\' annotations are replaced by the archive\'s, each old one with a delete revision', async () => {
    const projectId = await projectWithDataset();
    const images = (await alice.get(`/api/projects/${projectId}/images`)).body as { id: number; original_name: string }[];
    const a = images.find((i) => i.original_name === 'a.jpg')!;
    const before = (await alice.get(`/api/images/${a.id}/annotations`)).body as { id: number }[];
    const res = await importInto(alice, projectId, await dataset(pictures, 2), { on_conflict: 'replace' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.conflicts, { on_conflict: 'replace', matched: 2, skipped: 0, replaced: 3 });
    assert.equal(res.body.annotations_created, 3);
    assert.equal(res.body.project.annotation_count, 3);
    const now = (await alice.get(`/api/images/${a.id}/annotations`)).body as { id: number; geometry: { x: number } }[];
    assert.equal(now.length, 2);
    assert.ok(now.every((n) => !before.some((b) => b.id === n.id)), 'the old annotations are gone');
    assert.ok(now.some((n) => n.geometry.x === 12), 'the archive\'s shifted box is there');
    const deletes = await t.versa.deps.db.selectFrom('revisions').select('annotation_id').where('action', '=', 'delete').where('project_id', '=', projectId).execute();
    assert.equal(deletes.length, 3);
    await assertCountersExact(t, projectId);
  });

  it('imports-conflict append: every annotation is added again (the old behaviour, asked for)', async () => {
    const projectId = await projectWithDataset();
    const res = await importInto(alice, projectId, await dataset(pictures), { on_conflict: 'append' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.conflicts, { on_conflict: 'append', matched: 3, skipped: 0, replaced: 0 });
    assert.equal(res.body.project.annotation_count, 6);
    await assertCountersExact(t, projectId);
    const bad = await importInto(alice, projectId, await dataset(pictures), { on_conflict: 'merge' });
    assert.equal(bad.status, 422);
  });
});
