import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { MaintenanceRepository } from '../../src/modules/maintenance/maintenance.repository.js';
import { MaintenanceService } from '../../src/modules/maintenance/maintenance.service.js';
import { TemporaryFiles } from '../../src/modules/maintenance/temporary-files.adapter.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';

type User = Awaited<ReturnType<TestApp['user']>>;

let shade = 0;
async function picture(width: number, height: number, format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  shade++;
  return sharp({ create: { width, height, channels: 3, background: { r: (shade * 53) % 256, g: (shade * 97) % 256, b: (shade * 13) % 256 } } })
    .toFormat(format)
    .toBuffer();
}

/** The pictures of a small YOLO dataset, made once so that tests can upload the same bytes beforehand. */
interface Pictures {
  one: Buffer;
  two: Buffer;
  three: Buffer;
}

async function pictures(): Promise<Pictures> {
  return { one: await picture(100, 50), two: await picture(40, 40, 'png'), three: await picture(80, 60) };
}

/**
 * Two train images and one valid image, classes cat and dog: one.jpg has a cat and a dog, three.jpg a dog. `catsOnly`:
 * the train images alone, class cat alone, one.jpg with its cat.
 */
function yoloDataset(p: Pictures, options: { names?: string; badLabel?: boolean; catsOnly?: boolean } = {}): ZipEntry[] {
  if (options.catsOnly) {
    return [
      { name: 'data.yaml', data: 'train: train/images\nnames: [cat]\n' },
      { name: 'train/images/one.jpg', data: p.one },
      { name: 'train/labels/one.txt', data: '0 0.5 0.5 0.2 0.4\n' },
      { name: 'train/images/two.png', data: p.two },
    ];
  }
  return [
    { name: 'data.yaml', data: `train: train/images\nval: valid/images\nnames: ${options.names ?? '[cat, dog]'}\n` },
    { name: 'train/images/one.jpg', data: p.one },
    { name: 'train/labels/one.txt', data: '0 0.5 0.5 0.2 0.4\n1 0.1 0.1 0.1 0.1\n' },
    { name: 'train/images/two.png', data: p.two },
    { name: 'train/labels/two.txt', data: '' },
    { name: 'valid/images/three.jpg', data: p.three },
    // The last image read: the others are already stored when its label file fails.
    { name: 'valid/labels/three.txt', data: options.badLabel ? '1 0.25 abc 0.5 0.5\n' : '1 0.25 0.5 0.5 0.5\n' },
  ];
}

function importInto(client: Client, projectId: number, zip: Buffer, fields: Record<string, string> = {}) {
  const { payload, headers } = multipart([{ name: 'file', filename: 'labelled.zip', data: zip, contentType: 'application/zip' }], fields);
  return client.request({ method: 'POST', url: `/api/projects/${projectId}/import`, payload, headers });
}

function uploadImage(client: Client, projectId: number, data: Buffer, filename: string) {
  const { payload, headers } = multipart([{ name: 'files', filename, data, contentType: 'application/octet-stream' }]);
  return client.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload, headers });
}

async function newProject(client: Client, classes: string[] = []): Promise<number> {
  const res = await client.post('/api/projects', { name: `target ${++shade}` });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  for (const name of classes) assert.equal((await client.post(`/api/projects/${res.body.id}/classes`, { name })).status, 201);
  return res.body.id;
}

/** Everything an import may change: rows, counters and stored files of the project, and hidden projects left over. */
async function snapshot(t: TestApp, projectId: number) {
  const db = t.versa.deps.db;
  const project = await db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
  const images = await db.selectFrom('images').select(['id', 'filename', 'split', 'annotation_count']).where('project_id', '=', projectId).orderBy('id').execute();
  const annotations = await db.selectFrom('annotations').select(['id', 'image_id', 'class_id']).where('project_id', '=', projectId).orderBy('id').execute();
  const classes = await db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).orderBy('id').execute();
  const revisions = await db.selectFrom('revisions').select('id').where('project_id', '=', projectId).execute();
  const hidden = await db.selectFrom('projects').select('id').where('status', '=', 'importing').execute();
  const dir = join(t.dataDir, 'blobs/projects', String(projectId));
  const files = existsSync(dir)
    ? (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort()
    : [];
  const counters = [project.image_count, project.annotated_image_count, project.annotation_count, project.class_count];
  return { counters, images, annotations, classes, revisions: revisions.length, hidden: hidden.length, files };
}

/** The project's counters are those of its rows, and each image's count is that of its annotations. */
async function assertCountersExact(t: TestApp, projectId: number): Promise<void> {
  const s = await snapshot(t, projectId);
  const perImage = new Map<number, number>();
  for (const a of s.annotations) perImage.set(a.image_id, (perImage.get(a.image_id) ?? 0) + 1);
  assert.deepEqual(s.counters, [s.images.length, perImage.size, s.annotations.length, s.classes.length], 'project counters equal the rows');
  for (const image of s.images) assert.equal(image.annotation_count, perImage.get(image.id) ?? 0, `annotation_count of image ${image.id}`);
  assert.equal(s.hidden, 0, 'no staging project left');
}

describe('import of a labelled dataset into an existing project', () => {
  let root: string;
  let t: TestApp;
  let alice: User;
  let bob: User;
  let viewer: User;
  let annotator: User;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'versa-import-into-root-'));
    t = await startTestApp({ IMPORT_ROOT: root });
    alice = await t.user();
    bob = await t.user();
    viewer = await t.user();
    annotator = await t.user();
  });
  after(async () => {
    await t.close();
    await rm(root, { recursive: true, force: true });
  });

  it('adds images and labels, matching classes case-insensitively and creating the others (201)', async () => {
    const projectId = await newProject(alice, ['Cat', 'bird']);
    const res = await importInto(alice, projectId, await buildZip(yoloDataset(await pictures())));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.project_id, projectId);
    assert.equal(res.body.format, 'yolo');
    assert.deepEqual(
      [res.body.images_created, res.body.images_merged, res.body.annotations_created, res.body.classes_created, res.body.classes_matched, res.body.skipped],
      [3, 0, 3, ['dog'], ['Cat'], []],
    );
    assert.deepEqual(
      [res.body.project.image_count, res.body.project.annotated_image_count, res.body.project.annotation_count, res.body.project.class_count],
      [3, 2, 3, 3],
    );

    const classes = (await alice.get(`/api/projects/${projectId}/classes`)).body as { id: number; name: string }[];
    assert.deepEqual(classes.map((c) => c.name), ['Cat', 'bird', 'dog']);
    const images = (await alice.get(`/api/projects/${projectId}/images`)).body as any[];
    assert.deepEqual(images.map((i) => [i.original_name, i.split, i.annotation_count]), [
      ['one.jpg', 'train', 2],
      ['two.png', 'train', 0],
      ['three.jpg', 'valid', 1],
    ]);
    const annotations = (await alice.get(`/api/images/${images[0].id}/annotations`)).body as any[];
    const className = new Map(classes.map((c) => [c.id, c.name]));
    assert.deepEqual(annotations.map((a) => [className.get(a.class_id), a.source, a.annotation_type]), [
      ['Cat', 'import', 'bbox'],
      ['dog', 'import', 'bbox'],
    ]);
    assert.deepEqual(annotations[0].geometry, { x: 40, y: 15, width: 20, height: 20 });
    // Each annotation has its create revision, naming the caller and its final image and class.
    const revisions = (await alice.get(`/api/images/${images[0].id}/revisions`)).body as any[];
    assert.deepEqual(revisions.map((r) => [r.action, r.annotation_id, r.user_id]).sort(), annotations.map((a) => ['create', a.id, alice.id]).sort());
    const created = revisions.find((r) => r.annotation_id === annotations[0].id);
    assert.equal(created.image_id, images[0].id);
    assert.deepEqual(created.after, { class_id: annotations[0].class_id, annotation_type: 'bbox', geometry: annotations[0].geometry, confidence: null, source: 'import', status: 'accepted' });
    // The files are served like uploaded ones.
    assert.equal((await alice.get(`/api/projects/${projectId}/images/file/${images[0].filename}`)).status, 200);
    assert.equal((await alice.get(`/api/images/${images[2].id}/thumbnail`)).status, 200);
    await assertCountersExact(t, projectId);
  });

  it('adds the labels of an image whose bytes are already in the project to it (merged), without a second image', async () => {
    const p = await pictures();
    const projectId = await newProject(alice, ['cat', 'dog']);
    const same = await uploadImage(alice, projectId, p.one, 'already-here.jpg');
    assert.equal(same.status, 201, JSON.stringify(same.body));
    // Other bytes under the name the dataset uses for two.png: the imported one gets a name of its own.
    assert.equal((await uploadImage(alice, projectId, await picture(30, 30, 'png'), 'two.png')).status, 201);
    const existingId = same.body.images[0].id;

    const zip = await buildZip(yoloDataset(p));
    const res = await importInto(alice, projectId, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual([res.body.images_created, res.body.images_merged, res.body.annotations_created], [2, 1, 3]);
    assert.deepEqual([res.body.classes_created, res.body.classes_matched], [[], ['cat', 'dog']]);
    assert.equal(res.body.project.image_count, 4, '2 uploaded + 2 new; the merged one is not counted twice');
    assert.equal(res.body.project.annotated_image_count, 2);
    const merged = (await alice.get(`/api/images/${existingId}`)).body;
    assert.equal(merged.annotation_count, 2);
    assert.equal(merged.split, 'train', 'an image without a split takes the dataset\'s');
    assert.equal(merged.original_name, 'already-here.jpg');
    const names = ((await alice.get(`/api/projects/${projectId}/images`)).body as any[]).map((i) => i.filename);
    assert.equal(new Set(names).size, 4);
    assert.ok(names.includes('two.png') && names.some((n) => /^two-[0-9a-f]{8}\.png$/.test(n)), names.join(', '));
    await assertCountersExact(t, projectId);

    // The same archive again with on_conflict=append: every image is merged, the labels are added again, nothing else grows.
    const again = await importInto(alice, projectId, zip, { on_conflict: 'append' });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.deepEqual([again.body.images_created, again.body.images_merged, again.body.annotations_created], [0, 3, 3]);
    assert.deepEqual([again.body.project.image_count, again.body.project.annotated_image_count, again.body.project.annotation_count], [4, 2, 6]);
    assert.equal((await alice.get(`/api/images/${existingId}`)).body.annotation_count, 4);
    await assertCountersExact(t, projectId);
  });

  it('keeps byte-identical copies inside the dataset as images of their own, and lists labels with no area as skipped', async () => {
    const p = await pictures();
    const projectId = await newProject(alice);
    const zip = await buildZip([
      ...yoloDataset(p),
      { name: 'train/images/zcopy.jpg', data: p.one },
      { name: 'train/labels/zcopy.txt', data: '0 0.5 0.5 0.2 0.2\n' },
      { name: 'train/images/edge.jpg', data: await picture(50, 50) },
      // Entirely outside the image: no area inside it.
      { name: 'train/labels/edge.txt', data: '0 1.5 1.5 0.2 0.2\n0 0.5 0.5 0.2 0.2\n' },
    ]);
    const res = await importInto(alice, projectId, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual([res.body.entries, res.body.images_created, res.body.images_merged, res.body.images_sharing_bytes], [5, 5, 0, 1]);
    assert.deepEqual(res.body.shared_bytes, [{ file: 'zcopy.jpg', same_as: 'one.jpg' }]);
    assert.equal(res.body.skipped_count, 1);
    assert.deepEqual(res.body.skipped.map((s: { file: string }) => s.file), ['edge.jpg']);
    assert.match(res.body.skipped[0].reason, /box lies outside the 50×50 image/);
    assert.equal(res.body.skipped[0].item, 'annotation 1 (bbox, class "cat")');
    // Every label is accounted for: read = kept + skipped.
    assert.deepEqual(res.body.counts.read.annotations, { bbox: 6 });
    assert.deepEqual(res.body.counts.kept.annotations, { bbox: 5 });
    assert.deepEqual(res.body.counts.skipped.annotations, { bbox: 1 });
    assert.deepEqual([res.body.counts.read.images, res.body.counts.kept.images], [5, 5]);
    await assertCountersExact(t, projectId);
  });

  it('keeps every entry of a COCO dataset with byte-identical images under different names, each with its own labels, the bytes stored once (issue 18)', async () => {
    const projectId = await newProject(alice, ['cat']);
    const same = await picture(60, 40);
    const coco = {
      categories: [{ id: 1, name: 'cat' }, { id: 2, name: 'dog' }],
      images: [
        { id: 1, file_name: 'left.jpg', width: 60, height: 40 },
        { id: 2, file_name: 'right.jpg', width: 60, height: 40 },
        { id: 3, file_name: 'other.jpg', width: 30, height: 30 },
      ],
      annotations: [
        { id: 1, image_id: 1, category_id: 1, bbox: [1, 1, 10, 10], area: 100, iscrowd: 0, segmentation: [] },
        { id: 2, image_id: 2, category_id: 2, bbox: [20, 10, 5, 8], area: 40, iscrowd: 0, segmentation: [] },
        { id: 3, image_id: 2, category_id: 1, bbox: [30, 20, 6, 6], area: 36, iscrowd: 0, segmentation: [] },
      ],
    };
    const zip = await buildZip([
      { name: 'train/_annotations.coco.json', data: JSON.stringify(coco) },
      { name: 'train/left.jpg', data: same },
      { name: 'train/right.jpg', data: same },
      { name: 'train/other.jpg', data: await picture(30, 30) },
    ]);
    const res = await importInto(alice, projectId, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(
      [res.body.entries, res.body.images_created, res.body.images_merged, res.body.images_sharing_bytes, res.body.annotations_created, res.body.skipped_count],
      [3, 3, 0, 1, 3, 0],
    );
    assert.deepEqual(res.body.shared_bytes, [{ file: 'right.jpg', same_as: 'left.jpg' }]);
    assert.deepEqual([res.body.project.image_count, res.body.project.annotated_image_count, res.body.project.annotation_count], [3, 2, 3]);

    const classes = new Map(((await alice.get(`/api/projects/${projectId}/classes`)).body as { id: number; name: string }[]).map((c) => [c.id, c.name]));
    const images = (await alice.get(`/api/projects/${projectId}/images`)).body as any[];
    assert.deepEqual(images.map((i) => [i.original_name, i.annotation_count]), [['left.jpg', 1], ['right.jpg', 2], ['other.jpg', 0]]);
    const labels = async (imageId: number) =>
      ((await alice.get(`/api/images/${imageId}/annotations`)).body as any[]).map((a) => [classes.get(a.class_id), a.geometry]);
    assert.deepEqual(await labels(images[0].id), [['cat', { x: 1, y: 1, width: 10, height: 10 }]]);
    assert.deepEqual(await labels(images[1].id), [['dog', { x: 20, y: 10, width: 5, height: 8 }], ['cat', { x: 30, y: 20, width: 6, height: 6 }]]);
    assert.equal(images[0].sha256, images[1].sha256);
    // One file and one thumbnail per distinct content.
    const files = (await snapshot(t, projectId)).files;
    assert.deepEqual([files.filter((f) => f.startsWith('images/')).length, files.filter((f) => f.startsWith('thumbs/')).length], [2, 2], files.join(', '));
    await assertCountersExact(t, projectId);

    // The same archive again (on_conflict=append): each entry finds the image of its name (the labels are added to it), nothing else grows.
    const again = await importInto(alice, projectId, zip, { on_conflict: 'append' });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.deepEqual([again.body.images_created, again.body.images_merged, again.body.annotations_created], [0, 3, 3]);
    const after = (await alice.get(`/api/projects/${projectId}/images`)).body as any[];
    assert.deepEqual(after.map((i) => [i.original_name, i.annotation_count]), [['left.jpg', 2], ['right.jpg', 4], ['other.jpg', 0]]);
    await assertCountersExact(t, projectId);

    // Deleting one of the two images keeps the file the other still uses, and so does the start-up sweep of orphan
    // files; deleting both removes it.
    assert.equal((await alice.delete(`/api/images/${images[0].id}`)).status, 204);
    const sweep = new MaintenanceService(new MaintenanceRepository(t.versa.deps.db), t.versa.deps.blobs, new TemporaryFiles(join(t.dataDir, 'tmp')), 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await sweep.sweep();
    assert.equal((await alice.get(`/api/projects/${projectId}/images/file/${images[1].filename}`)).status, 200);
    assert.equal((await alice.get(`/api/images/${images[1].id}/thumbnail`)).status, 200);
    assert.equal((await alice.delete(`/api/images/${images[1].id}`)).status, 204);
    const left = (await snapshot(t, projectId)).files;
    assert.deepEqual([left.filter((f) => f.startsWith('images/')).length, left.filter((f) => f.startsWith('thumbs/')).length], [1, 1], left.join(', '));
    await assertCountersExact(t, projectId);
  });

  it('gives an entry whose bytes the project has to that image once: a second entry with the same bytes becomes an image of its own', async () => {
    const projectId = await newProject(alice, ['cat']);
    const same = await picture(60, 40);
    const uploaded = await uploadImage(alice, projectId, same, 'uploaded.jpg');
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    const zip = await buildZip([
      { name: 'data.yaml', data: 'train: train/images\nnames: [cat]\n' },
      { name: 'train/images/a.jpg', data: same },
      { name: 'train/labels/a.txt', data: '0 0.5 0.5 0.2 0.4\n' },
      { name: 'train/images/b.jpg', data: same },
      { name: 'train/labels/b.txt', data: '0 0.2 0.2 0.1 0.1\n0 0.7 0.7 0.1 0.1\n' },
    ]);
    const res = await importInto(alice, projectId, zip);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(
      [res.body.entries, res.body.images_created, res.body.images_merged, res.body.images_sharing_bytes, res.body.annotations_created],
      [2, 1, 1, 1, 3],
    );
    assert.deepEqual(res.body.shared_bytes, [{ file: 'b.jpg', same_as: 'uploaded.jpg' }]);
    const images = (await alice.get(`/api/projects/${projectId}/images`)).body as any[];
    assert.deepEqual(images.map((i) => [i.original_name, i.annotation_count]), [['uploaded.jpg', 1], ['b.jpg', 2]]);
    const files = (await snapshot(t, projectId)).files;
    assert.equal(files.length, 2, files.join(', '));
    await assertCountersExact(t, projectId);
  });

  it('new_classes=refuse answers 422 naming the classes the project lacks, and changes nothing', async () => {
    const p = await pictures();
    const projectId = await newProject(alice, ['CAT']);
    assert.equal((await importInto(alice, projectId, await buildZip(yoloDataset(p, { catsOnly: true })), { new_classes: 'refuse' })).status, 201);
    const before = await snapshot(t, projectId);
    const res = await importInto(alice, projectId, await buildZip(yoloDataset(p, { names: '[cat, dog, Fish]' })), { new_classes: 'refuse' });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.detail, /"dog", "Fish"/);
    assert.doesNotMatch(res.body.detail, /"cat"/);
    assert.deepEqual(await snapshot(t, projectId), before);
    await assertCountersExact(t, projectId);
  });

  it('a bad label file is 422 and leaves the project exactly as it was (rows, counters, files)', async () => {
    const p = await pictures();
    const projectId = await newProject(alice, ['cat']);
    assert.equal((await uploadImage(alice, projectId, p.two, 'kept.png')).status, 201);
    const before = await snapshot(t, projectId);
    assert.equal(before.files.length, 2, 'the uploaded image and its thumbnail');
    const res = await importInto(alice, projectId, await buildZip(yoloDataset(p, { badLabel: true })));
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.detail, /three\.txt/);
    assert.deepEqual(await snapshot(t, projectId), before, 'no rows, counters or files added; the file of the image already there is kept');
    const tmp = join(t.dataDir, 'tmp');
    const leftovers = existsSync(tmp) ? (await readdir(tmp, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()) : [];
    assert.deepEqual(leftovers.map((e) => e.name), [], 'no temporary files left');
  });

  it('refuses another user\'s project (404), a viewer (403), anonymous callers (401) and bad parts (422)', async () => {
    const p = await pictures();
    const projectId = await newProject(alice, ['cat', 'dog']);
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' })).status, 201);
    const zip = await buildZip(yoloDataset(p));
    const before = await snapshot(t, projectId);
    assert.equal((await importInto(bob, projectId, zip)).status, 404);
    assert.equal((await importInto(bob, 2_000_000_000, zip)).status, 404);
    const forbidden = await importInto(viewer, projectId, zip);
    assert.equal(forbidden.status, 403, JSON.stringify(forbidden.body));
    assert.equal((await importInto(t.client(), projectId, zip)).status, 401);
    assert.equal((await bob.post(`/api/projects/${projectId}/import/folder`, { path: 'x' })).status, 404);
    assert.equal((await viewer.post(`/api/projects/${projectId}/import/folder`, { path: 'x' })).status, 403);
    assert.equal((await t.client().post(`/api/projects/${projectId}/import/folder`, { path: 'x' })).status, 401);
    const bad = await importInto(alice, projectId, zip, { new_classes: 'maybe' });
    assert.equal(bad.status, 422);
    assert.match(JSON.stringify(bad.body.detail), /new_classes/);
    const noFile = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/import`, ...multipart([], { new_classes: 'create' }) });
    assert.equal(noFile.status, 422);
    assert.equal((await alice.post(`/api/projects/${projectId}/import/folder`, { path: 'x', new_classes: 'maybe' })).status, 422);
    assert.deepEqual(await snapshot(t, projectId), before);
  });

  it('annotators import into the classes there are; creating classes needs classes.write (403); assigned-only annotators are refused (403)', async () => {
    const p = await pictures();
    const projectId = await newProject(alice, ['cat']);
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { user_id: annotator.id, role: 'annotator' })).status, 201);
    const before = await snapshot(t, projectId);
    const creating = await importInto(annotator, projectId, await buildZip(yoloDataset(p)));
    assert.equal(creating.status, 403, JSON.stringify(creating.body));
    assert.match(creating.body.detail, /"dog"/);
    assert.deepEqual(await snapshot(t, projectId), before);
    const known = await importInto(annotator, projectId, await buildZip(yoloDataset(p, { catsOnly: true })));
    assert.equal(known.status, 201, JSON.stringify(known.body));
    assert.deepEqual([known.body.images_created, known.body.annotations_created], [2, 1]);
    await assertCountersExact(t, projectId);

    assert.equal((await alice.patch(`/api/projects/${projectId}`, { assigned_only: true })).status, 200);
    const assignedOnly = await importInto(annotator, projectId, await buildZip(yoloDataset(await pictures(), { catsOnly: true })));
    assert.equal(assignedOnly.status, 403, JSON.stringify(assignedOnly.body));
  });

  it('another user\'s lock on an image that would be merged refuses the import (409), changing nothing', async () => {
    const p = await pictures();
    const projectId = await newProject(alice, ['cat', 'dog']);
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { user_id: bob.id, role: 'annotator' })).status, 201);
    const uploaded = await uploadImage(alice, projectId, p.three, 'three.jpg');
    assert.equal((await bob.post(`/api/images/${uploaded.body.images[0].id}/lock`)).status, 200);
    const before = await snapshot(t, projectId);
    const res = await importInto(alice, projectId, await buildZip(yoloDataset(p)));
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.match(res.body.detail, /locked/);
    assert.deepEqual(await snapshot(t, projectId), before);
  });

  it('imports a folder under the import root into the project (201); outside the root is 403', async () => {
    const p = await pictures();
    for (const entry of yoloDataset(p)) {
      await mkdir(join(root, 'labelled', entry.name, '..'), { recursive: true });
      await writeFile(join(root, 'labelled', entry.name), entry.data);
    }
    const projectId = await newProject(alice, ['dog']);
    const res = await alice.post(`/api/projects/${projectId}/import/folder`, { path: 'labelled', format: 'yolo' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual([res.body.images_created, res.body.annotations_created, res.body.classes_created, res.body.classes_matched], [3, 3, ['cat'], ['dog']]);
    await assertCountersExact(t, projectId);
    const refused = await alice.post(`/api/projects/${projectId}/import/folder`, { path: 'labelled', new_classes: 'refuse' });
    assert.equal(refused.status, 201, 'every class now exists: refuse lets it through');
    assert.equal(refused.body.images_merged, 3);
    assert.equal((await alice.post(`/api/projects/${projectId}/import/folder`, { path: '../..' })).status, 403);
    await assertCountersExact(t, projectId);
  });
});

/** Real samples copied from the shared datasets (test/fixtures/<name>/SOURCE.md), one per layout family. */
const DATASETS = new URL('../fixtures/', import.meta.url).pathname;
const LAYOUTS = ['indian-vehicles-yolo', 'toy-cars-yolo-seg', 'plants-coco-seg', 'car-damage-coco-seg', 'fresh-rotten-cls', 'indoor-semantic-masks'];

describe('every layout the project import reads, into an existing project', () => {
  let t: TestApp;
  let alice: User;
  before(async () => {
    t = await startTestApp({ IMPORT_ROOT: DATASETS });
    alice = await t.user();
  });
  after(() => t.close());

  for (const folder of LAYOUTS) {
    it(`${folder}: the same rows as a new project's import; a second import merges every image`, async () => {
      const fresh = await alice.post('/api/projects/import/folder', { path: folder });
      assert.equal(fresh.status, 201, JSON.stringify(fresh.body));
      const projectId = await newProject(alice);
      const first = await alice.post(`/api/projects/${projectId}/import/folder`, { path: folder });
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const counters = (p: any) => [p.image_count, p.annotated_image_count, p.annotation_count, p.class_count];
      assert.deepEqual(counters(first.body.project), counters(fresh.body));
      assert.equal(first.body.images_created, fresh.body.image_count);
      assert.equal(first.body.annotations_created, fresh.body.annotation_count);
      await assertCountersExact(t, projectId);

      const second = await alice.post(`/api/projects/${projectId}/import/folder`, { path: folder, new_classes: 'refuse', on_conflict: 'append' });
      assert.equal(second.status, 201, JSON.stringify(second.body));
      assert.deepEqual([second.body.images_created, second.body.images_merged, second.body.classes_created.length], [0, fresh.body.image_count, 0]);
      assert.deepEqual(counters(second.body.project), [fresh.body.image_count, fresh.body.annotated_image_count, 2 * fresh.body.annotation_count, fresh.body.class_count]);
      await assertCountersExact(t, projectId);
    });
  }
});
