import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';

let shade = 0;
const picture = (w: number, h: number) => {
  shade++;
  return sharp({ create: { width: w, height: h, channels: 3, background: { r: (shade * 53) % 256, g: (shade * 97) % 256, b: 40 } } }).jpeg().toBuffer();
};

/** A VoTT CSV dataset: a kept box, a box with no area (the import skips it), a row naming a missing image (the reader skips it). */
async function lossyDataset(): Promise<ZipEntry[]> {
  return [
    { name: 'export/a.jpg', data: await picture(60, 40) },
    { name: 'export/b.jpg', data: await picture(50, 50) },
    { name: 'export/cars-export.csv', data: '"image","xmin","ymin","xmax","ymax","label"\n"a.jpg",1,2,30,20,"car"\n"b.jpg",10,10,10,30,"car"\n"gone.jpg",1,1,5,5,"car"\n' },
  ];
}

async function cleanDataset(): Promise<ZipEntry[]> {
  return [
    { name: 'export/a.jpg', data: await picture(60, 40) },
    { name: 'export/cars-export.csv', data: '"image","xmin","ymin","xmax","ymax","label"\n"a.jpg",1,2,30,20,"car"\n' },
  ];
}

function post(client: Client, url: string, zip: Buffer, fields: Record<string, string>) {
  const { payload, headers } = multipart([{ name: 'file', filename: 'cars.zip', data: zip, contentType: 'application/zip' }], fields);
  return client.request({ method: 'POST', url, payload, headers });
}

/** Projects (any status), images and annotations of the whole database: a refused import changes none of them. */
async function totals(t: TestApp) {
  const db = t.versa.deps.db;
  const count = async (table: 'projects' | 'images' | 'annotations' | 'classes') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return { projects: await count('projects'), images: await count('images'), annotations: await count('annotations'), classes: await count('classes') };
}

function assertLossListed(body: { detail: string; skipped: { file: string; item: string; reason: string }[]; skipped_count: number; counts: { skipped: { images: number; annotations: Record<string, number> } } }) {
  assert.match(body.detail, /strict/);
  assert.equal(body.skipped_count, 3, JSON.stringify(body));
  const items = body.skipped.map((s) => `${s.file}: ${s.item}: ${s.reason}`).join('\n');
  assert.match(items, /gone\.jpg/);
  assert.match(items, /b\.jpg/);
  assert.deepEqual(body.counts.skipped.images, 1);
  assert.deepEqual(body.counts.skipped.annotations, { bbox: 2 });
}

describe('imports-strict: strict=true refuses a dataset of which anything would be lost', () => {
  let root: string;
  let t: TestApp;
  let alice: Client;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'versa-strict-root-'));
    t = await startTestApp({ IMPORT_ROOT: root });
    alice = await t.user();
  });
  after(async () => {
    await t.close();
    await rm(root, { recursive: true, force: true });
  });

  it('imports-strict new project from an archive: 422 listing what would be lost, nothing created; without strict it imports and lists the same', async () => {
    const zip = await buildZip(await lossyDataset());
    const before = await totals(t);
    const refused = await post(alice, '/api/projects/import', zip, { strict: 'true' });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assertLossListed(refused.body);
    assert.deepEqual(await totals(t), before, 'nothing was created');

    const lenient = await post(alice, '/api/projects/import', zip, { strict: 'false' });
    assert.equal(lenient.status, 201, JSON.stringify(lenient.body));
    assert.equal(lenient.body.import.skipped_count, 3);
    assert.equal(lenient.body.annotation_count, 1);
  });

  it('imports-strict a dataset that loses nothing imports under strict', async () => {
    const res = await post(alice, '/api/projects/import', await buildZip(await cleanDataset()), { strict: 'true' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.import.skipped_count, 0);
  });

  it('imports-strict new project from a folder: 422 with the list, nothing created', async () => {
    const folder = join(root, 'lossy');
    for (const entry of await lossyDataset()) {
      await mkdir(join(folder, entry.name, '..'), { recursive: true });
      await writeFile(join(folder, entry.name), entry.data);
    }
    const before = await totals(t);
    const res = await alice.post('/api/projects/import/folder', { path: 'lossy', strict: true });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assertLossListed(res.body);
    assert.deepEqual(await totals(t), before);
    const into = await alice.post('/api/projects', { name: 'target' });
    const res2 = await alice.post(`/api/projects/${into.body.id}/import/folder`, { path: 'lossy', strict: true });
    assert.equal(res2.status, 422, JSON.stringify(res2.body));
    assertLossListed(res2.body);
  });

  it('imports-strict into a project: 422 with the list, the project unchanged; a bad strict value is 422 on the field', async () => {
    const project = await alice.post('/api/projects', { name: 'target' });
    const zip = await buildZip(await lossyDataset());
    const before = await totals(t);
    const res = await post(alice, `/api/projects/${project.body.id}/import`, zip, { strict: 'true' });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assertLossListed(res.body);
    assert.deepEqual(await totals(t), before, 'no staging rows, images or classes left');
    const after = (await alice.get(`/api/projects/${project.body.id}`)).body;
    assert.deepEqual([after.image_count, after.annotation_count, after.class_count], [0, 0, 0]);

    const bad = await post(alice, `/api/projects/${project.body.id}/import`, zip, { strict: 'yes' });
    assert.equal(bad.status, 422);
    assert.match(JSON.stringify(bad.body.detail), /strict/);
  });
});
