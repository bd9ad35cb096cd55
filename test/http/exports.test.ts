import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { zipEntries } from '../helpers/zip-entries.js';
import { pagedItems, versionItems } from '../../src/modules/exports/export-dataset.service.js';
import { ExportsRepository } from '../../src/modules/exports/exports.repository.js';

type User = Awaited<ReturnType<TestApp['user']>>;

let shade = 0;
async function picture(width: number, height: number): Promise<Buffer> {
  shade++;
  return sharp({ create: { width, height, channels: 3, background: { r: (shade * 41) % 256, g: (shade * 83) % 256, b: 90 } } }).jpeg().toBuffer();
}

async function ok<T = any>(res: Promise<{ status: number; body: T }>, status = 200): Promise<T> {
  const r = await res;
  assert.equal(r.status, status, JSON.stringify(r.body));
  return r.body;
}

async function upload(client: Client, projectId: number, name: string, data: Buffer): Promise<any> {
  const { payload, headers } = multipart([{ filename: name, data, contentType: 'image/jpeg' }]);
  const body = await ok(client.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload, headers }), 201);
  return body.images[0];
}

/** Files under the project's exports prefix in blob storage. */
async function exportFiles(t: TestApp, projectId: number): Promise<string[]> {
  const root = join(t.dataDir, 'blobs', 'projects', String(projectId), 'exports');
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)));
}

const exportRows = (t: TestApp, projectId: number) => t.versa.deps.db.selectFrom('exports').selectAll().where('project_id', '=', projectId).execute();

describe('export', () => {
  let t: TestApp;
  let alice: User;
  let bob: User;
  let projectId: number;
  let images: any[];

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    bob = await t.user();
    projectId = (await ok(alice.post('/api/projects', { name: 'Street Scenes #1', project_type: 'instance_segmentation' }), 201)).id;
    const car = (await ok(alice.post(`/api/projects/${projectId}/classes`, { name: 'car' }), 201)).id;
    const formula = (await ok(alice.post(`/api/projects/${projectId}/classes`, { name: '=HYPERLINK("x")' }), 201)).id;
    images = [
      await upload(alice, projectId, 'a.jpg', await picture(200, 100)),
      await upload(alice, projectId, 'b.jpg', await picture(120, 80)),
      await upload(alice, projectId, 'empty.jpg', await picture(64, 64)),
    ];
    await ok(alice.patch(`/api/images/${images[0].id}`, { split: 'train' }));
    await ok(alice.patch(`/api/images/${images[1].id}`, { split: 'valid' }));
    const annotate = (imageId: number, body: object) => ok(alice.post(`/api/images/${imageId}/annotations`, body), 201);
    await annotate(images[0].id, { class_id: car, annotation_type: 'bbox', geometry: { x: 10.5, y: 20, width: 50, height: 40 } });
    await annotate(images[0].id, { class_id: formula, annotation_type: 'bbox', geometry: { x: 100, y: 10, width: 20, height: 30 } });
    await annotate(images[1].id, { class_id: car, annotation_type: 'polygon', geometry: { points: [[10, 10], [60, 10], [60, 50]] } });
  });
  after(() => t.close());

  it('exports COCO JSON: answers the file reference, and the download holds every image, class and box', async () => {
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'coco' }));
    assert.match(out.filename, /^street-scenes-1-project-coco-[0-9a-f]{16}\.json$/);
    assert.equal(out.url, `/api/exports/${out.filename}`);
    assert.equal(out.format, 'coco');
    assert.equal(out.image_count, 3);
    assert.equal(out.annotation_count, 3);
    assert.equal(out.version_id, null);
    assert.ok(!Number.isNaN(Date.parse(out.created_at)));

    const file = await alice.get(out.url);
    assert.equal(file.status, 200);
    assert.equal(file.headers['content-type'], 'application/json');
    assert.equal(Number(file.headers['content-length']), out.size_bytes);
    assert.equal(file.raw.length, out.size_bytes);
    assert.match(String(file.headers['content-disposition']), /attachment/);
    const coco = file.body;
    assert.deepEqual(coco.categories.map((c: any) => c.name), ['car', '=HYPERLINK("x")']);
    assert.deepEqual(coco.images.map((i: any) => [i.file_name, i.width, i.height, i.split ?? null]), [
      ['a.jpg', 200, 100, 'train'],
      ['b.jpg', 120, 80, 'valid'],
      ['empty.jpg', 64, 64, null],
    ]);
    assert.deepEqual(coco.annotations[0].bbox, [10.5, 20, 50, 40]);
    assert.deepEqual(coco.annotations[2].segmentation, [[10, 10, 60, 10, 60, 50]]);
  });

  it('leaves out unannotated images when include_unannotated is false', async () => {
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'coco', include_unannotated: false }));
    assert.equal(out.image_count, 2);
    const coco = (await alice.get(out.url)).body;
    assert.deepEqual(coco.images.map((i: any) => i.file_name), ['a.jpg', 'b.jpg']);
  });

  it('exports YOLO as a zip with data.yaml, images and normalised labels per split', async () => {
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'yolo' }));
    assert.match(out.filename, /-project-yolo-[0-9a-f]{16}\.zip$/);
    const file = await alice.get(out.url);
    assert.equal(file.headers['content-type'], 'application/zip');
    const entries = await zipEntries(file.raw);
    assert.deepEqual([...entries.keys()].sort(), [
      'data.yaml', 'train/images/a.jpg', 'train/images/empty.jpg', 'train/labels/a.txt', 'train/labels/empty.txt',
      'valid/images/b.jpg', 'valid/labels/b.txt',
    ]);
    const original = await alice.get(`/api/projects/${projectId}/images/file/${images[0].filename}`);
    assert.ok(entries.get('train/images/a.jpg')!.equals(original.raw), 'images are exported byte for byte');
    const [first] = entries.get('train/labels/a.txt')!.toString().trim().split('\n');
    const [cls, cx, cy, w, h] = first.split(' ').map(Number);
    assert.equal(cls, 0);
    assert.ok(Math.abs(cx * 200 - 35.5) < 0.01 && Math.abs(cy * 100 - 40) < 0.01 && Math.abs(w * 200 - 50) < 0.01 && Math.abs(h * 100 - 40) < 0.01);
    assert.equal(entries.get('train/labels/empty.txt')!.length, 0);
    assert.match(entries.get('data.yaml')!.toString(), /nc: 2/);
  });

  it('neutralises spreadsheet formulas in CSV cells', async () => {
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'csv' }));
    const text = (await alice.get(out.url)).raw.toString();
    assert.equal(text.split('\n')[0], 'image,split,image_width,image_height,class,type,x,y,width,height,points');
    assert.ok(text.includes(`"'=HYPERLINK(""x"")"`), text);
    assert.ok(!/(^|,)"?=HYPERLINK/m.test(text), 'no cell starts with =');
  });

  it('exports jsonl, Pascal VOC and COCO with images', async () => {
    for (const format of ['jsonl', 'voc', 'coco_zip'] as const) {
      const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format }));
      assert.equal(out.image_count, 3, format);
      const file = await t.app.inject({ method: 'GET', url: out.url, headers: { authorization: `Bearer ${alice.token}` } });
      assert.equal(file.statusCode, 200, format);
      assert.equal(file.rawPayload.length, out.size_bytes, format);
    }
  });

  it('refuses without credentials (401)', async () => {
    const anonymous = t.client();
    const res = await anonymous.post(`/api/projects/${projectId}/export`, { format: 'coco' });
    assert.equal(res.status, 401);
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'jsonl' }));
    assert.equal((await anonymous.get(out.url)).status, 401);
  });

  it("hides another user's project and files (404), and unknown projects", async () => {
    assert.equal((await bob.post(`/api/projects/${projectId}/export`, { format: 'coco' })).status, 404);
    assert.equal((await alice.post('/api/projects/999999/export', { format: 'coco' })).status, 404);
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'coco' }));
    const res = await bob.get(out.url);
    assert.equal(res.status, 404);
    assert.match(res.body.detail, /not found/);
  });

  it('serves only names the export route created: unknown names and traversal are 404', async () => {
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'coco' }));
    for (const name of [
      'nothing-here.json',
      '..%2F..%2Fversa.db',
      '..%2Fversa.db',
      encodeURIComponent(`../../projects/${projectId}/exports/${out.filename}`),
      encodeURIComponent(`projects/${projectId}/exports/${out.filename}`),
      out.filename.toUpperCase(),
    ]) {
      const res = await alice.get(`/api/exports/${name}`);
      assert.equal(res.status, 404, name);
    }
    // A NUL byte is refused as input before any lookup (the same on both databases).
    assert.equal((await alice.get(`/api/exports/${out.filename}%00`)).status, 422);
    assert.equal((await alice.get('/api/exports/../../versa.db')).status, 404);
  });

  it('validates the request (422)', async () => {
    const bad = [
      {},
      { format: 'tfrecord' },
      { format: 'coco', include_unannotated: 'maybe' },
      { format: 'coco', version_id: -1 },
      { format: 'coco', version_id: 'latest' },
    ];
    for (const body of bad) {
      const res = await alice.post(`/api/projects/${projectId}/export`, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.ok(Array.isArray(res.body.detail));
    }
    assert.equal((await alice.post('/api/projects/abc/export', { format: 'coco' })).status, 422);
    // The download route has no body or query; an over-long name is refused before routing.
    assert.equal((await alice.get(`/api/exports/${'a'.repeat(300)}`)).status, 414);
  });

  it('answers 404 for a version that is not in the project', async () => {
    const res = await alice.post(`/api/projects/${projectId}/export`, { format: 'coco', version_id: 424242 });
    assert.equal(res.status, 404);
    assert.match(res.body.detail, /Version 424242 not found/);
  });

  it('leaves no row and no file behind when the export fails', async () => {
    const other = (await ok(alice.post('/api/projects', { name: 'many classes', project_type: 'semantic_segmentation' }), 201)).id;
    await upload(alice, other, 'one.jpg', await picture(20, 20));
    const now = new Date().toISOString();
    await t.versa.deps.db
      .insertInto('classes')
      .values(Array.from({ length: 256 }, (_, i) => ({ project_id: other, name: `c${i}`, color: '#000000', created_at: now })))
      .execute();
    const res = await alice.post(`/api/projects/${other}/export`, { format: 'masks' });
    assert.equal(res.status, 422);
    assert.match(JSON.stringify(res.body.detail), /255 classes/);
    assert.deepEqual(await exportRows(t, other), []);
    assert.deepEqual(await exportFiles(t, other), []);

    // A file that vanished from storage fails the export midway: still nothing left behind.
    const image = await t.versa.deps.db.selectFrom('images').select('blob_key').where('project_id', '=', other).executeTakeFirstOrThrow();
    await t.versa.deps.blobs.delete(image.blob_key);
    const broken = await alice.post(`/api/projects/${other}/export`, { format: 'yolo' });
    assert.equal(broken.status, 500);
    assert.deepEqual(await exportRows(t, other), []);
    assert.deepEqual(await exportFiles(t, other), []);
  });

  it('records each export as one row and one stored file', async () => {
    const rows = await exportRows(t, projectId);
    const files = await exportFiles(t, projectId);
    assert.deepEqual(files.sort(), rows.map((r) => r.filename).sort());
  });
});

describe('export of a dataset version', () => {
  let t: TestApp;
  let alice: User;
  let projectId: number;
  let versionId: number;

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    projectId = (await ok(alice.post('/api/projects', { name: 'versioned' }), 201)).id;
    await ok(alice.post(`/api/projects/${projectId}/classes`, { name: 'live-class' }), 201);
    const db = t.versa.deps.db;
    const now = new Date().toISOString();
    const version = await db
      .insertInto('versions')
      .values({
        project_id: projectId, number: 3, name: 'v3', notes: '', seed: 1, split_config: '{}', preprocessing_config: '{}',
        augmentation_config: '{}', status: 'ready', image_counts: '{}', created_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    versionId = version.id;
    await db.insertInto('version_classes').values([
      { version_id: versionId, index: 0, name: 'frozen-a', color: '#111111' },
      { version_id: versionId, index: 1, name: 'frozen-b', color: '#222222' },
    ]).execute();
    const outputs = [
      { split: 'train', filename: 'out-1.jpg', width: 100, height: 50, boxes: [{ x: 0, y: 0, width: 50, height: 25, cls: 'frozen-b' }] },
      { split: 'test', filename: 'out-2.jpg', width: 80, height: 80, boxes: [] },
    ];
    for (const o of outputs) {
      const key = `projects/${projectId}/versions/3/${o.split}/${o.filename}`;
      await t.versa.deps.blobs.put(key, await picture(o.width, o.height));
      const row = await db
        .insertInto('version_images')
        .values({ version_id: versionId, split: o.split, filename: o.filename, blob_key: key, width: o.width, height: o.height, source_image_id: null, lineage: '[]', sha256: 'x' })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const b of o.boxes) {
        await db.insertInto('version_annotations').values({
          version_image_id: row.id, class_name: b.cls, class_index: 1, annotation_type: 'bbox',
          geometry: JSON.stringify({ x: b.x, y: b.y, width: b.width, height: b.height }),
        }).execute();
      }
    }
  });
  after(() => t.close());

  it("exports the version's generated images and frozen classes, not the live project", async () => {
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'yolo', version_id: versionId }));
    assert.match(out.filename, /^versioned-v3-yolo-[0-9a-f]{16}\.zip$/);
    assert.equal(out.version_id, versionId);
    assert.equal(out.image_count, 2);
    assert.equal(out.annotation_count, 1);
    const entries = await zipEntries((await alice.get(out.url)).raw);
    assert.deepEqual([...entries.keys()].sort(), ['data.yaml', 'test/images/out-2.jpg', 'test/labels/out-2.txt', 'train/images/out-1.jpg', 'train/labels/out-1.txt']);
    assert.equal(entries.get('train/labels/out-1.txt')!.toString().trim(), '1 0.25 0.25 0.5 0.5');
    assert.match(entries.get('data.yaml')!.toString(), /frozen-a[\s\S]*frozen-b/);
    const annotated = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'coco', version_id: versionId, include_unannotated: false }));
    assert.equal(annotated.image_count, 1);
  });

  it('refuses a version that is not ready (409) and one of another project (404)', async () => {
    await t.versa.deps.db.updateTable('versions').set({ status: 'generating' }).where('id', '=', versionId).execute();
    const res = await alice.post(`/api/projects/${projectId}/export`, { format: 'coco', version_id: versionId });
    assert.equal(res.status, 409);
    await t.versa.deps.db.updateTable('versions').set({ status: 'ready' }).where('id', '=', versionId).execute();
    const other = (await ok(alice.post('/api/projects', { name: 'other' }), 201)).id;
    assert.equal((await alice.post(`/api/projects/${other}/export`, { format: 'coco', version_id: versionId })).status, 404);
  });
});

describe('export paging', () => {
  let t: TestApp;
  let alice: User;
  let projectId: number;
  let versionId: number;
  /** What each export must hold: per image (in id order), its annotations' class and x, in id order. */
  const projectExpected: { fileName: string; boxes: string[] }[] = [];
  const versionExpected: { fileName: string; split: string; boxes: string[] }[] = [];

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    const db = t.versa.deps.db;
    const now = new Date().toISOString();
    projectId = (await ok(alice.post('/api/projects', { name: 'paged' }), 201)).id;
    const otherId = (await ok(alice.post('/api/projects', { name: 'interleaved' }), 201)).id;
    const classOf = new Map<number, { id: number; name: string }[]>();
    for (const project of [projectId, otherId]) {
      const classes = [];
      for (const name of ['a', 'b']) classes.push({ id: (await ok(alice.post(`/api/projects/${project}/classes`, { name }), 201)).id, name });
      classOf.set(project, classes);
    }
    // Images of the two projects take turns, so every id range of one project holds the other's annotations too;
    // annotation counts vary around the chunk sizes the test reads with.
    for (let i = 0; i < 12; i++) {
      for (const project of [projectId, otherId]) {
        const count = (i * 5) % 7;
        const image = await db
          .insertInto('images')
          .values({
            project_id: project, filename: `p${project}-${i}.jpg`, original_name: 'x.jpg', width: 100, height: 100, split: 'train',
            sha256: `${project}-${i}`, mime_type: 'image/jpeg', size_bytes: 1, blob_key: 'k', thumbnail_key: 'k', annotation_count: count, created_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const boxes = [];
        for (let k = 0; k < count; k++) {
          const cls = classOf.get(project)![(i + k) % 2];
          await db.insertInto('annotations').values({
            image_id: image.id, project_id: project, class_id: cls.id, annotation_type: 'bbox',
            geometry: JSON.stringify({ x: k, y: 0, width: 5, height: 5 }), confidence: null, source: 'manual', created_at: now, updated_at: now,
          }).execute();
          boxes.push(`${cls.name}@${k}`);
        }
        if (project === projectId) projectExpected.push({ fileName: `p${project}-${i}.jpg`, boxes });
      }
    }
    versionId = (await db
      .insertInto('versions')
      .values({
        project_id: projectId, number: 1, name: 'v1', notes: '', seed: 1, split_config: '{}', preprocessing_config: '{}',
        augmentation_config: '{}', status: 'ready', image_counts: '{}', created_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow()).id;
    const splits = ['train', 'valid', 'test'];
    for (let i = 0; i < 15; i++) {
      const split = splits[(i * 7) % 3];
      const image = await db
        .insertInto('version_images')
        .values({ version_id: versionId, split, filename: `v-${i}.jpg`, blob_key: 'k', width: 100, height: 100, source_image_id: null, lineage: '[]', sha256: 'x' })
        .returning('id')
        .executeTakeFirstOrThrow();
      const boxes = [];
      for (let k = 0; k < (i * 3) % 5; k++) {
        await db.insertInto('version_annotations').values({
          version_image_id: image.id, class_name: 'a', class_index: 0, annotation_type: 'bbox', geometry: JSON.stringify({ x: k, y: 0, width: 5, height: 5 }),
        }).execute();
        boxes.push(`a@${k}`);
      }
      versionExpected.push({ fileName: `v-${i}.jpg`, split, boxes });
    }
    versionExpected.sort((x, y) => splits.indexOf(x.split) - splits.indexOf(y.split));
  });
  after(() => t.close());

  const summary = (item: { fileName: string; annotations: { className: string; geometry: unknown }[] }) => ({
    fileName: item.fileName,
    boxes: item.annotations.map((a) => `${a.className}@${(a.geometry as { x: number }).x}`),
  });

  it("reads every image with exactly its own annotations, whatever the page and chunk sizes", async () => {
    const repository = new ExportsRepository(t.versa.deps.db);
    const source = {
      images: (cursor: Parameters<ExportsRepository['projectImages']>[1]) => repository.projectImages(projectId, cursor),
      annotations: (cursor: Parameters<ExportsRepository['projectAnnotations']>[1]) => repository.projectAnnotations(projectId, cursor),
    };
    for (const sizes of [{ images: 1000, annotations: 5000 }, { images: 5, annotations: 3 }, { images: 1, annotations: 1 }, { images: 4, annotations: 6 }]) {
      const items = [];
      for await (const item of pagedItems(source, t.versa.deps.blobs, false, new AbortController().signal, sizes)) items.push(summary(item));
      assert.deepEqual(items, projectExpected, JSON.stringify(sizes));
      const annotated = [];
      for await (const item of pagedItems(source, t.versa.deps.blobs, true, new AbortController().signal, sizes)) annotated.push(summary(item));
      assert.deepEqual(annotated, projectExpected.filter((e) => e.boxes.length > 0), JSON.stringify(sizes));
    }
    const version = [];
    const pages = (split: string) => ({
      images: (cursor: Parameters<ExportsRepository['projectImages']>[1]) => repository.versionImages(versionId, split, cursor),
      annotations: (cursor: Parameters<ExportsRepository['projectAnnotations']>[1]) => repository.versionAnnotations(versionId, split, cursor),
    });
    for await (const item of versionItems(pages, t.versa.deps.blobs, false, new AbortController().signal, { images: 2, annotations: 2 })) {
      version.push({ ...summary(item), split: item.split });
    }
    assert.deepEqual(version, versionExpected);
  });

  it('exports the project with its own annotations only', async () => {
    const out = await ok(alice.post(`/api/projects/${projectId}/export`, { format: 'coco' }));
    assert.equal(out.image_count, projectExpected.length);
    assert.equal(out.annotation_count, projectExpected.reduce((n, e) => n + e.boxes.length, 0));
    const coco = JSON.parse((await alice.get(out.url)).raw.toString());
    const names = new Map<number, string>(coco.categories.map((c: { id: number; name: string }) => [c.id, c.name]));
    const files = new Map<number, string>(coco.images.map((i: { id: number; file_name: string }) => [i.id, i.file_name]));
    const boxes = projectExpected.map((e) => ({ fileName: e.fileName, boxes: [] as string[] }));
    for (const a of coco.annotations) boxes.find((b) => b.fileName === files.get(a.image_id))!.boxes.push(`${names.get(a.category_id)}@${a.bbox[0]}`);
    assert.deepEqual(boxes, projectExpected);
  });
});
