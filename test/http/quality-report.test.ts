import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { ProfileRepository } from '../../src/modules/profile/profile.repository.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject, nearCopy, smoothImage, uploadImages } from '../helpers/version-fixtures.js';

/** Random pixels: sharp (high Laplacian variance), colourful, high entropy. */
const noise = (seed: number, width = 160, height = 120) => {
  const data = Buffer.alloc(width * height * 3);
  let s = seed * 2654435761;
  for (let i = 0; i < data.length; i++) data[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
  return sharp(data, { raw: { width, height, channels: 3 } }).png().toBuffer();
};
const flat = (value: number, width = 160, height = 120) => sharp({ create: { width, height, channels: 3, background: { r: value, g: value, b: value } } }).png().toBuffer();

describe('quality report and profile', () => {
  let t: TestApp;
  let owner: Client;
  let stranger: Client;
  let projectId: number;
  const ids: Record<string, number> = {};
  let cat: number;
  let dog: number;

  before(async () => {
    // Features measured at upload, so that a later measurement can be compared with the upload's.
    t = await startTestApp({ INGEST_FEATURES: '1' });
    owner = await t.user();
    stranger = await t.user();
    projectId = await createProject(owner, 'quality');
    const base = await smoothImage(1);
    const files = [
      { name: 'sharp1.png', data: await noise(1) },
      { name: 'sharp2.png', data: await noise(2) },
      { name: 'sharp3.png', data: await noise(3) },
      { name: 'smooth.jpg', data: base },
      { name: 'copy.jpg', data: await nearCopy(base, 150, 110) },
      { name: 'dark.png', data: await flat(5) },
      { name: 'wide.png', data: await noise(4, 400, 40) },
    ];
    const images = await uploadImages(owner, projectId, files);
    files.forEach((f, i) => (ids[f.name] = images[i].id));
    cat = await createClass(owner, projectId, 'cat');
    dog = await createClass(owner, projectId, 'dog');
    const bird = await createClass(owner, projectId, 'bird');
    await createClass(owner, projectId, 'unused');
    await addBox(owner, ids['sharp1.png'], cat, { x: 10, y: 10, width: 40, height: 30 });
    await addBox(owner, ids['sharp1.png'], cat, { x: 11, y: 10, width: 40, height: 30 });
    await addBox(owner, ids['sharp2.png'], cat, { x: 0, y: 0, width: 1, height: 1 });
    await addBox(owner, ids['sharp2.png'], bird, { x: 60, y: 60, width: 20, height: 20 });
    await addBox(owner, ids['sharp3.png'], dog, { x: 20, y: 20, width: 50, height: 50 });
    await addBox(owner, ids['sharp3.png'], cat, { x: 21, y: 20, width: 50, height: 50 });
    const db = t.versa.deps.db;
    await db.updateTable('images').set({ split: 'train' }).where('id', 'in', [ids['sharp1.png'], ids['sharp2.png'], ids['smooth.jpg']]).execute();
    await db.updateTable('images').set({ split: 'valid' }).where('id', 'in', [ids['sharp3.png'], ids['copy.jpg']]).execute();
  });
  after(() => t.close());

  const check = (report: any, id: string) => report.checks.find((c: any) => c.id === id);

  it('lists the check catalog with params, filtered by modality', async () => {
    const all = await owner.get('/api/quality/checks');
    assert.equal(all.status, 200);
    const blurry = all.body.find((c: any) => c.id === 'blurry');
    assert.deepEqual(blurry.params.threshold.default, 50);
    assert.equal(blurry.severity, 'warning');
    assert.ok(all.body.length >= 20);
    assert.ok((await owner.get('/api/quality/checks?modality=text')).body.every((c: any) => c.modality === 'text' && c.id.startsWith('text_')));
    assert.equal((await owner.get('/api/quality/checks?modality=smell')).status, 422);
    assert.equal((await t.client().get('/api/quality/checks')).status, 401);
  });

  it('features were measured at upload: the first report computes none', async () => {
    const rows = await t.versa.deps.db.selectFrom('image_features').select('image_id').execute();
    assert.equal(rows.length, 7);
    const res = await owner.get(`/api/projects/${projectId}/quality`);
    assert.equal(res.status, 200);
    assert.equal(res.body.features.computed, 0);
  });

  it('finds what is wrong with the images', async () => {
    const report = (await owner.get(`/api/projects/${projectId}/quality`)).body;
    const flagged = (id: string) => check(report, id).image_ids.sort();
    assert.deepEqual(flagged('near_duplicates'), [ids['copy.jpg']]);
    assert.deepEqual(flagged('split_leakage').sort(), [ids['smooth.jpg'], ids['copy.jpg']].sort());
    assert.deepEqual(flagged('too_dark'), [ids['dark.png']]);
    assert.ok(flagged('low_information').includes(ids['dark.png']));
    assert.ok(flagged('blurry').includes(ids['smooth.jpg']));
    assert.ok(!flagged('blurry').includes(ids['sharp1.png']));
    assert.deepEqual(flagged('odd_size'), [ids['wide.png']]);
    assert.ok(!flagged('grayscale').includes(ids['sharp1.png']));
    assert.deepEqual(check(report, 'unreadable').count, 0);
  });

  it('finds what is wrong with the annotations', async () => {
    const report = (await owner.get(`/api/projects/${projectId}/quality`)).body;
    assert.equal(check(report, 'duplicate_boxes').count, 1);
    assert.equal(check(report, 'duplicate_boxes').items[0].image_id, ids['sharp1.png']);
    assert.equal(check(report, 'overlapping_classes').count, 1);
    assert.equal(check(report, 'degenerate_annotations').count, 1);
    assert.equal(check(report, 'touching_border').count, 1);
    assert.equal(check(report, 'unannotated_images').count, 4);
    assert.match(check(report, 'unused_classes').items[0].detail, /unused/);
    assert.deepEqual(check(report, 'class_missing_from_split').items.map((i: any) => i.detail), ['bird: 1 in train, none in valid']);
    assert.deepEqual(check(report, 'rare_classes').count, 3);
    assert.ok(report.score >= 0 && report.score < 100);
  });

  it('takes a configuration; bad ids and params are 422 naming the valid ones', async () => {
    const res = await owner.post(`/api/projects/${projectId}/quality`, { checks: ['blurry'], params: { blurry: { threshold: 0 } } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.checks.map((c: any) => c.id), ['blurry']);
    assert.equal(res.body.checks[0].count, 0);
    const unknown = await owner.post(`/api/projects/${projectId}/quality`, { checks: ['blurry', 'nope'] });
    assert.equal(unknown.status, 422);
    assert.deepEqual(unknown.body.detail[0].loc, ['body', 'checks', 1]);
    assert.match(unknown.body.detail[0].msg, /valid: .*blurry/);
    const range = await owner.post(`/api/projects/${projectId}/quality`, { params: { too_dark: { threshold: 300 } } });
    assert.equal(range.status, 422);
    assert.deepEqual(range.body.detail[0].loc, ['body', 'params', 'too_dark', 'threshold']);
    const name = await owner.post(`/api/projects/${projectId}/quality`, { params: { too_dark: { limit: 3 } } });
    assert.equal(name.status, 422);
  });

  it('measures lazily, and again when the bytes change', async () => {
    const db = t.versa.deps.db;
    await db.deleteFrom('image_features').where('image_id', '=', ids['dark.png']).execute();
    await db.updateTable('image_features').set({ sha256: 'stale' }).where('image_id', '=', ids['sharp1.png']).execute();
    const res = await owner.get(`/api/projects/${projectId}/quality`);
    assert.equal(res.body.features.computed, 2);
    assert.deepEqual(check(res.body, 'too_dark').image_ids, [ids['dark.png']]);
    assert.equal((await owner.get(`/api/projects/${projectId}/quality`)).body.features.computed, 0);
  });

  it('measures a stored file later exactly as ingest measured it (one definition of the features and the dHash)', async () => {
    const db = t.versa.deps.db;
    const read = () => Promise.all([
      db.selectFrom('image_features').select(['image_id', 'readable', 'truncated', 'blur', 'brightness', 'entropy', 'grayscale', 'pixel_hash']).orderBy('image_id').execute(),
      db.selectFrom('image_phashes').select(['image_id', 'dhash']).orderBy('image_id').execute(),
    ]);
    const [atIngest, hashesAtIngest] = await read();
    assert.equal(atIngest.length, Object.keys(ids).length);
    await db.deleteFrom('image_features').execute();
    await db.deleteFrom('image_phashes').execute();
    assert.equal((await owner.get(`/api/projects/${projectId}/quality`)).body.features.computed, Object.keys(ids).length);
    const [later, hashesLater] = await read();
    assert.deepEqual(later, atIngest);
    assert.deepEqual(hashesLater, hashesAtIngest);
    // The near copy (resized, re-encoded) stays within the near-duplicate distance of its source.
    const hash = new Map(hashesLater.map((h) => [h.image_id, BigInt(`0x${h.dhash}`)]));
    const distance = (hash.get(ids['smooth.jpg'])! ^ hash.get(ids['copy.jpg'])!).toString(2).replace(/0/g, '').length;
    assert.ok(distance <= 8, `near copy ${distance} bits away`);
  });

  it('profiles the dataset', async () => {
    const res = await owner.get(`/api/projects/${projectId}/profile`);
    assert.equal(res.status, 200);
    const p = res.body;
    assert.deepEqual(p.totals, { images: 7, annotated_images: 3, annotations: 6, classes: 4 });
    assert.deepEqual(p.splits.train, { images: 3, annotated: 2 });
    assert.deepEqual(p.splits.unassigned, { images: 2, annotated: 0 });
    const catRow = p.classes.find((c: any) => c.name === 'cat');
    assert.equal(catRow.instances, 4);
    assert.equal(catRow.images, 3);
    assert.deepEqual(catRow.instances_by_split, { train: 3, valid: 1 });
    assert.deepEqual(p.box_sizes, { small: 2, medium: 4, large: 0 });
    assert.equal(p.box_heatmap.counts.flat().reduce((a: number, b: number) => a + b, 0), 6);
    assert.equal(p.box_heatmap.counts[0][0], 1);
    assert.equal(p.box_heatmap.counts[5][4], 1);
    assert.deepEqual(p.annotations_per_image.find((r: any) => r.annotations === 2), { annotations: 2, images: 3 });
  });

  it('hands out a kept profile while nothing changed, and a fresh one after any change', async () => {
    let computed = 0;
    const original = ProfileRepository.prototype.imageParts;
    ProfileRepository.prototype.imageParts = function (this: ProfileRepository, id: number, first: number, last: number) {
      computed++;
      return original.call(this, id, first, last);
    };
    try {
      const profile = async () => (await owner.get(`/api/projects/${projectId}/profile`)).body;
      const first = await profile();
      const before = computed;
      assert.deepEqual(await profile(), first);
      assert.equal(computed, before, 'the second profile is the kept one');

      const box = await addBox(owner, ids['smooth.jpg'], dog, { x: 5, y: 5, width: 10, height: 10 });
      let p = await profile();
      assert.equal(p.totals.annotations, first.totals.annotations + 1, 'a new annotation shows');
      assert.equal(p.totals.annotated_images, first.totals.annotated_images + 1);
      assert.equal(computed, before + 1);

      await t.versa.deps.db.updateTable('images').set({ split: 'test' }).where('id', '=', ids['smooth.jpg']).execute();
      p = await profile();
      assert.deepEqual(p.splits.test, { images: 1, annotated: 1 }, 'a split change shows');
      assert.equal(p.classes.find((c: any) => c.name === 'dog').instances_by_split.test, 1);

      assert.equal(computed, before + 2);

      assert.equal((await owner.patch(`/api/classes/${dog}`, { name: 'hound' })).status, 200);
      p = await profile();
      assert.ok(p.classes.some((c: any) => c.name === 'hound'), 'a renamed class shows');
      assert.equal(computed, before + 2, 'a renamed class leaves the image parts kept');

      assert.equal((await owner.delete(`/api/annotations/${box.id}`)).status, 204);
      await t.versa.deps.db.updateTable('images').set({ split: 'train' }).where('id', '=', ids['smooth.jpg']).execute();
      assert.equal((await owner.patch(`/api/classes/${dog}`, { name: 'dog' })).status, 200);
      assert.deepEqual(await profile(), first, 'undone, the profile is the first again');
    } finally {
      ProfileRepository.prototype.imageParts = original;
    }
  });

  it('401, 404 for a foreign project', async () => {
    for (const url of [`/api/projects/${projectId}/quality`, `/api/projects/${projectId}/profile`]) {
      assert.equal((await t.client().get(url)).status, 401);
      assert.equal((await stranger.get(url)).status, 404);
    }
    assert.equal((await stranger.post(`/api/projects/${projectId}/quality`, {})).status, 404);
  });
});

describe('canonical export', () => {
  let t: TestApp;
  let owner: Client;
  let token: string;
  let stranger: Client;
  let projectId: number;
  let box: any;
  let labelled: any;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    stranger = await t.user();
    token = (owner as Client & { token: string }).token;
    projectId = await createProject(owner, 'canonical');
    const images = await uploadImages(owner, projectId, [
      { name: 'one.jpg', data: await smoothImage(1) },
      { name: 'two.jpg', data: await smoothImage(2) },
    ]);
    const cat = await createClass(owner, projectId, 'cat "quoted"');
    box = await addBox(owner, images[0].id, cat, { x: 1, y: 2, width: 3, height: 4 });
    const dog = await createClass(owner, projectId, 'dog\\back');
    const label = await owner.post(`/api/images/${images[1].id}/annotations`, { class_id: dog, annotation_type: 'classification', geometry: {}, confidence: 0.75 });
    assert.equal(label.status, 201);
    labelled = label.body;
    await t.versa.deps.db.updateTable('images').set({ split: 'valid' }).where('id', '=', images[1].id).execute();
  });
  after(() => t.close());

  it('streams one universal record per image as JSON Lines, and as one JSON document', async () => {
    // The test client would parse any content type that mentions json: read the raw lines.
    const res = await t.app.inject({ method: 'GET', url: `/api/projects/${projectId}/canonical`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /application\/x-ndjson/);
    const lines = res.body.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, 2);
    const [first, second] = lines;
    assert.deepEqual(Object.keys(first).sort(), ['annotations', 'id', 'label', 'media', 'metadata', 'modality', 'spans', 'split', 'value']);
    assert.equal(first.modality, 'image');
    assert.equal(first.split, null);
    assert.equal(second.split, 'valid');
    assert.equal(first.media.width, 160);
    assert.match(first.media.uri, /\/images\/file\//);
    assert.deepEqual(first.annotations, [
      { id: box.id, label: 'cat "quoted"', class_id: box.class_id, type: 'bbox', geometry: { x: 1, y: 2, width: 3, height: 4 }, confidence: null, source: box.source, status: 'accepted', attributes: {}, group_id: null },
    ]);
    assert.equal(first.label, null);
    assert.deepEqual(second.annotations, [
      { id: labelled.id, label: 'dog\\back', class_id: labelled.class_id, type: 'classification', geometry: {}, confidence: 0.75, source: labelled.source, status: 'accepted', attributes: {}, group_id: null },
    ]);
    assert.equal(second.label, 'dog\\back', 'a classification annotation is the record-level label');

    const json = await owner.get(`/api/projects/${projectId}/canonical?format=json`);
    assert.match(String(json.headers['content-type']), /application\/json/);
    assert.deepEqual(json.body, lines);
    const valid = await owner.get(`/api/projects/${projectId}/canonical?format=json&split=valid`);
    assert.deepEqual(valid.body.map((r: any) => r.id), [second.id]);
  });

  it('documents the record schema in the OpenAPI document', async () => {
    const doc = (await t.client().get('/openapi.json')).body;
    const content = doc.paths['/api/projects/{id}/canonical'].get.responses['200'].content;
    const schema = content['application/x-ndjson'].schema;
    assert.deepEqual(Object.keys(schema.properties).sort(), ['annotations', 'id', 'label', 'media', 'metadata', 'modality', 'spans', 'split', 'value']);
  });

  it('401, 404, 422', async () => {
    assert.equal((await t.client().get(`/api/projects/${projectId}/canonical`)).status, 401);
    assert.equal((await stranger.get(`/api/projects/${projectId}/canonical`)).status, 404);
    assert.equal((await owner.get(`/api/projects/${projectId}/canonical?format=xml`)).status, 422);
  });
});
