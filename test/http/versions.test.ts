import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject, smoothImage, uploadImages } from '../helpers/version-fixtures.js';

const SMALL = { resize: { width: 64, height: 48 } };
const AUGMENT = { outputs_per_image: 3, flip_horizontal: true, rotation: 15, brightness: 20, noise: 5 };

describe('versions', () => {
  let t: TestApp;
  let owner: Client;
  let other: Client;
  let projectId: number;
  let images: any[];
  let cat: number;
  let dog: number;
  const boxes: any[] = [];

  const create = (body: Record<string, unknown>, project = projectId) => owner.post(`/api/projects/${project}/versions`, body);
  const ready = async (id: number, project = projectId) => {
    await t.versa.deps.queue.drain();
    const res = await owner.get(`/api/projects/${project}/versions/${id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ready', JSON.stringify(res.body));
    return res.body;
  };
  const outputs = async (id: number, query = '') => {
    const res = await owner.get(`/api/projects/${projectId}/versions/${id}/images?limit=1000${query}`);
    assert.equal(res.status, 200);
    return res.body as any[];
  };
  const versionBlobs = async (number: number) => {
    const root = join(t.dataDir, 'blobs', 'projects', String(projectId), 'versions', String(number));
    if (!existsSync(root)) return [];
    return (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name).sort();
  };
  const versionCount = async () =>
    (await t.versa.deps.db.selectFrom('versions').select('id').where('project_id', '=', projectId).execute()).length;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    other = await t.user();
    projectId = await createProject(owner);
    const files = await Promise.all(Array.from({ length: 6 }, async (_, i) => ({ name: `img${i}.jpg`, data: await smoothImage(i) })));
    images = await uploadImages(owner, projectId, files);
    cat = await createClass(owner, projectId, 'cat');
    dog = await createClass(owner, projectId, 'dog');
    for (let i = 0; i < 6; i++) boxes.push(await addBox(owner, images[i].id, i % 2 ? dog : cat, { x: 20, y: 10, width: 60, height: 50 }));
    // Two images keep a split of their own; the others are assigned per version.
    assert.equal((await owner.patch(`/api/images/${images[0].id}`, { split: 'test' })).status, 200);
    assert.equal((await owner.patch(`/api/images/${images[1].id}`, { split: 'valid' })).status, 200);
  });
  after(() => t.close());

  it('serves the pipeline defaults with every option and its range', async () => {
    const res = await owner.get('/api/pipeline/defaults');
    assert.equal(res.status, 200);
    assert.equal(res.body.preprocessing_config.auto_orient, true);
    assert.equal(res.body.preprocessing_config.resize.enabled, true);
    assert.equal(res.body.augmentation_config.enabled, false);
    const blur = res.body.options.augmentation_config.find((o: any) => o.key === 'blur');
    assert.deepEqual([blur.minimum, blur.maximum], [0, 25]);
    assert.ok(res.body.options.preprocessing_config.some((o: any) => o.key === 'resize.mode' && o.enum.includes('fit_reflect')));
    assert.equal((await t.client().get('/api/pipeline/defaults')).status, 401);
  });

  it('refuses out-of-range options and bad split configs with the pipeline issues (422), creating nothing', async () => {
    const blur = await create({ name: 'v', augmentation_config: { blur: 30, outputs_per_image: 0 } });
    assert.equal(blur.status, 422);
    const locs = blur.body.detail.map((d: any) => d.loc.join('.'));
    assert.ok(locs.includes('body.augmentation_config.blur'), locs.join());
    assert.ok(locs.includes('body.augmentation_config.outputs_per_image'), locs.join());
    const resize = await create({ name: 'v', preprocessing_config: { resize: { width: 0 }, colour: true } });
    assert.equal(resize.status, 422);
    assert.ok(resize.body.detail.some((d: any) => d.loc.join('.') === 'body.preprocessing_config.resize.width'));
    assert.ok(resize.body.detail.some((d: any) => d.loc.join('.') === 'body.preprocessing_config.colour'));
    const split = await create({ name: 'v', split_config: { train: 50, valid: 30, test: 30 } });
    assert.equal(split.status, 422);
    assert.deepEqual(split.body.detail[0].loc, ['body', 'split_config']);
    assert.equal((await create({ name: 'v', split_config: { train: 150, valid: -30, test: -20 } })).status, 422);
    assert.equal((await create({ name: '' })).status, 422);
    assert.equal((await create({ notes: 'no name' })).status, 422);
    assert.equal((await create({ name: 'v', seed: -1 })).status, 422);
    assert.equal(await versionCount(), 0);
  });

  it('creates versions numbered 1, 2, 3, pending at once, generated by a job, with image counts', async () => {
    const first = await create({ name: 'plain', preprocessing_config: SMALL, seed: 11 });
    assert.equal(first.status, 201);
    assert.equal(first.body.number, 1);
    assert.equal(first.body.status, 'pending');
    assert.equal(first.body.seed, 11);
    assert.deepEqual(first.body.split_config, { train: 70, valid: 20, test: 10 });
    assert.equal(first.body.preprocessing_config.resize.width, 64);
    assert.equal(first.body.preprocessing_config.auto_orient, true, 'defaults filled in');
    assert.equal(first.body.augmentation_config.enabled, false);
    assert.equal(first.body.source_counts.total, 6);
    assert.equal(typeof first.body.job_id, 'number');

    const second = await create({ name: 'augmented', preprocessing_config: SMALL, augmentation_config: AUGMENT, seed: 11 });
    const third = await create({ name: 'empty configs', preprocessing_config: null, augmentation_config: {} });
    assert.deepEqual([second.body.number, third.body.number], [2, 3]);

    const v1 = await ready(first.body.id);
    const { train, valid, test } = v1.source_counts;
    assert.ok(valid >= 1 && test >= 1, 'images keep the split they had');
    assert.deepEqual(v1.image_counts, { train, valid, test, total: 6 });
    assert.equal(v1.progress, 1);
    const job = await owner.get(`/api/jobs/${first.body.job_id}`);
    assert.equal(job.body.status, 'succeeded');

    const v2 = await ready(second.body.id);
    assert.deepEqual(v2.source_counts, v1.source_counts, 'same seed, same assignment of unassigned images');
    assert.deepEqual(v2.image_counts, { train: train * 3, valid, test, total: train * 3 + valid + test });
    const v3 = await ready(third.body.id);
    assert.equal(v3.preprocessing_config.resize.width, 640);

    const list = await owner.get(`/api/projects/${projectId}/versions`);
    assert.deepEqual(list.body.map((v: any) => v.number), [1, 2, 3]);
    const byId = await owner.get(`/api/versions/${second.body.id}`);
    assert.equal(byId.body.name, 'augmented');
    // Splits of the project are untouched: only the version records the assignment.
    const rows = await t.versa.deps.db.selectFrom('images').select('split').where('project_id', '=', projectId).execute();
    assert.equal(rows.filter((r) => r.split === null).length, 4);
  });

  it('shows each output with its lineage, annotations in output pixels and its bytes', async () => {
    const [v1, v2] = (await owner.get(`/api/projects/${projectId}/versions`)).body;
    const plain = await outputs(v1.id);
    assert.equal(plain.length, 6);
    const first = plain.find((o) => o.source_image_id === images[2].id);
    assert.equal(first.width, 64);
    assert.equal(first.height, 48);
    const resize = first.lineage.find((s: any) => s.op === 'resize');
    assert.equal(resize.mode, 'stretch');
    assert.equal(resize.scale_x, 64 / 160);
    assert.equal(first.annotations.length, 1);
    assert.equal(first.annotations[0].class_name, 'cat');
    assert.equal(first.annotations[0].class_index, 0);
    assert.deepEqual(first.annotations[0].geometry, { x: 8, y: 4, width: 24, height: 20 });

    const file = await owner.get(first.file_url);
    assert.equal(file.status, 200);
    assert.equal(file.headers['content-type'], 'image/jpeg');
    assert.equal(createHash('sha256').update(file.raw).digest('hex'), first.sha256);
    const meta = await sharp(file.raw).metadata();
    assert.deepEqual([meta.width, meta.height], [64, 48]);

    const augmented = await outputs(v2.id, '&split=train');
    assert.equal(augmented.length, v2.image_counts.train);
    assert.ok(augmented.every((o) => o.split === 'train' && o.lineage.some((s: any) => s.op === 'rotate')));
    assert.ok(augmented.every((o) => /-a[012]\.jpg$/.test(o.filename)));
    const paged = await owner.get(`/api/projects/${projectId}/versions/${v2.id}/images?limit=2`);
    assert.equal(paged.body.length, 2);
    assert.equal(paged.headers['x-total-count'], String(v2.image_counts.total));
    assert.match(String(paged.headers.link), /after=/);
    assert.deepEqual(await versionBlobs(v2.number), [...(await outputs(v2.id)).map((o) => o.filename)].sort());
  });

  it('is reproducible: the same recipe and seed, or a regeneration, give byte-identical files', async () => {
    const [, v2] = (await owner.get(`/api/projects/${projectId}/versions`)).body;
    const again = await create({ name: 'again', preprocessing_config: SMALL, augmentation_config: AUGMENT, seed: 11 });
    await ready(again.body.id);
    const hashes = async (id: number) => Object.fromEntries((await outputs(id)).map((o) => [o.filename, o.sha256]));
    const original = await hashes(v2.id);
    assert.equal(Object.keys(original).length, v2.image_counts.total);
    assert.deepEqual(await hashes(again.body.id), original);

    const regen = await owner.post(`/api/projects/${projectId}/versions/${v2.id}/regenerate`);
    assert.equal(regen.status, 202);
    assert.equal(regen.body.status, 'pending');
    await ready(v2.id);
    assert.deepEqual(await hashes(v2.id), original);

    const otherSeed = await create({ name: 'other seed', preprocessing_config: SMALL, augmentation_config: AUGMENT, seed: 12 });
    await ready(otherSeed.body.id);
    assert.notDeepEqual(await hashes(otherSeed.body.id), original);
  });

  it('writes its outputs in the sources\' order whatever order they render in, so the same seed trains the same', async () => {
    // The first image renders far slower than the others: with two workers the others finished first and were
    // written first, so two versions of one project listed (and were trained on in) different orders.
    const project = await createProject(owner, 'order');
    const big = await sharp({ create: { width: 2400, height: 2400, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg({ quality: 95 }).toBuffer();
    const files = [{ name: 'slow.jpg', data: big }, ...(await Promise.all(Array.from({ length: 5 }, async (_, i) => ({ name: `quick${i}.jpg`, data: await smoothImage(20 + i) }))))];
    const uploaded = await uploadImages(owner, project, files);
    const sources = (await owner.get(`/api/projects/${project}/images?limit=100`)).body.map((image: any) => image.filename);
    assert.deepEqual(sources, uploaded.map((image) => image.filename));
    for (const seed of [1, 2]) {
      const created = await create({ name: `order ${seed}`, preprocessing_config: SMALL, seed }, project);
      await ready(created.body.id, project);
      const listed = (await owner.get(`/api/projects/${project}/versions/${created.body.id}/images?limit=1000`)).body as any[];
      assert.deepEqual(listed.map((o) => o.source_image_id), uploaded.map((image) => image.id), `version with seed ${seed}`);
    }
  });

  it('freezes the project: later edits to annotations, splits and images do not change a version', async () => {
    const created = await create({ name: 'frozen', preprocessing_config: SMALL, seed: 5 });
    // Edit everything before the job has even run.
    const edited = await owner.put(`/api/annotations/${boxes[2].id}`, { class_id: dog, annotation_type: 'bbox', geometry: { x: 0, y: 0, width: 10, height: 10 } });
    assert.equal(edited.status, 200);
    await owner.patch(`/api/images/${images[3].id}`, { split: 'test' });
    const version = await ready(created.body.id);
    // Its outputs are its own: deleting a source image later leaves them.
    assert.equal((await owner.delete(`/api/images/${images[5].id}`)).status, 204);
    assert.equal(version.source_counts.total, 6);
    const out = await outputs(created.body.id);
    assert.equal(out.length, 6);
    const frozen = out.find((o) => o.source_image_id === images[2].id);
    assert.deepEqual(frozen.annotations.map((a: any) => [a.class_name, a.geometry]), [['cat', { x: 8, y: 4, width: 24, height: 20 }]]);
    assert.ok(out.some((o) => o.source_image_id === images[5].id), 'a deleted source image is still in the version');
    // The deleted image's bytes stay while the version's snapshot refers to them, so it can be regenerated.
    const before = Object.fromEntries(out.map((o) => [o.filename, o.sha256]));
    assert.equal((await owner.post(`/api/projects/${projectId}/versions/${created.body.id}/regenerate`)).status, 202);
    const again = await ready(created.body.id);
    assert.equal(again.status, 'ready');
    assert.deepEqual(Object.fromEntries((await outputs(created.body.id)).map((o) => [o.filename, o.sha256])), before);
  });

  it('diffs two versions by source image, content and annotations', async () => {
    const versions = (await owner.get(`/api/projects/${projectId}/versions`)).body;
    const frozen = versions.find((v: any) => v.name === 'frozen');
    const [added] = await uploadImages(owner, projectId, [{ name: 'new.jpg', data: await smoothImage(77) }]);
    const later = await create({ name: 'later', preprocessing_config: SMALL, seed: 5 });
    await ready(later.body.id);
    const res = await owner.get(`/api/projects/${projectId}/versions/${frozen.id}/diff/${later.body.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.a, { id: frozen.id, number: frozen.number });
    assert.deepEqual(res.body.images.added, [added.id]);
    assert.deepEqual(res.body.images.removed, [images[5].id]);
    const changed = new Map(res.body.images.changed.map((c: any) => [c.source_image_id, c]));
    assert.deepEqual(changed.get(images[2].id), { source_image_id: images[2].id, content_changed: false, split: null, annotations_added: 1, annotations_removed: 1 });
    const moved: any = changed.get(images[3].id);
    if (moved) assert.equal(moved.split.to, 'test');
    assert.deepEqual(res.body.annotations, { added: 1, removed: 2 });
    assert.deepEqual(res.body.config_changes, []);
    const same = await owner.get(`/api/projects/${projectId}/versions/${later.body.id}/diff/${later.body.id}`);
    assert.equal(same.body.images.changed.length, 0);
    assert.equal(same.body.outputs.identical, same.body.outputs.a);
    const recipe = await owner.get(`/api/projects/${projectId}/versions/${versions[0].id}/diff/${versions[1].id}`);
    assert.ok(recipe.body.config_changes.includes('augmentation_config.enabled'));
  });

  it('refuses to delete a version something references (409), and deletes others with their files (204)', async () => {
    const versions = (await owner.get(`/api/projects/${projectId}/versions`)).body;
    const target = versions[0];
    const db = t.versa.deps.db;
    await db.schema.createTable('test_version_refs').addColumn('version_id', 'integer').execute();
    await db.insertInto('test_version_refs' as any).values({ version_id: target.id }).execute();
    const refused = await owner.delete(`/api/projects/${projectId}/versions/${target.id}`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /in use/);
    assert.equal((await owner.get(`/api/versions/${target.id}`)).status, 200);
    assert.ok((await versionBlobs(target.number)).length > 0);
    await db.deleteFrom('test_version_refs' as any).execute();

    assert.equal((await other.delete(`/api/projects/${projectId}/versions/${target.id}`)).status, 404);
    const deleted = await owner.delete(`/api/projects/${projectId}/versions/${target.id}`);
    assert.equal(deleted.status, 204);
    assert.equal((await owner.get(`/api/versions/${target.id}`)).status, 404);
    assert.deepEqual(await versionBlobs(target.number), []);
    const rows = await db.selectFrom('version_images').select('id').where('version_id', '=', target.id).execute();
    assert.equal(rows.length, 0);
    const next = await create({ name: 'after delete', preprocessing_config: SMALL });
    assert.equal(next.body.number, versions.at(-1).number + 1, 'numbers are never reused');
    await t.versa.deps.queue.drain();
  });

  it('needs credentials (401), hides other users\' and unknown versions (404), validates ids (422)', async () => {
    const v = (await owner.get(`/api/projects/${projectId}/versions`)).body.at(-1);
    const [image] = await outputs(v.id);
    const base = `/api/projects/${projectId}/versions`;
    const routes: [string, string][] = [
      ['GET', base],
      ['POST', base],
      ['GET', `${base}/${v.id}`],
      ['GET', `/api/versions/${v.id}`],
      ['POST', `${base}/${v.id}/regenerate`],
      ['DELETE', `${base}/${v.id}`],
      ['GET', `${base}/${v.id}/diff/${v.id}`],
      ['GET', `${base}/${v.id}/images`],
      ['GET', `${base}/${v.id}/images/${image.id}/file`],
    ];
    const count = await versionCount();
    for (const [method, url] of routes) {
      const payload = method === 'POST' && url === base ? { name: 'x' } : undefined;
      assert.equal((await t.client().request({ method: method as any, url, payload })).status, 401, `${method} ${url} anonymous`);
      assert.equal((await other.request({ method: method as any, url, payload })).status, 404, `${method} ${url} as another user`);
    }
    assert.equal(await versionCount(), count);
    assert.equal((await owner.get(`${base}/999999`)).status, 404);
    assert.equal((await owner.get('/api/versions/999999')).status, 404);
    assert.equal((await owner.get(`${base}/${v.id}/images/999999/file`)).status, 404);
    assert.equal((await owner.get(`${base}/${v.id}/diff/999999`)).status, 404);
    assert.equal((await owner.delete(`${base}/999999`)).status, 404);
    assert.equal((await owner.post(`${base}/999999/regenerate`)).status, 404);
    assert.equal((await owner.get(`/api/projects/999999/versions`)).status, 404);
    // A version is only found under its own project.
    const otherProject = await createProject(owner, 'second');
    assert.equal((await owner.get(`/api/projects/${otherProject}/versions/${v.id}`)).status, 404);
    assert.equal((await owner.get(`/api/projects/${otherProject}/versions/${v.id}/images`)).status, 404);

    assert.equal((await owner.get(`${base}/abc`)).status, 422);
    assert.equal((await owner.get('/api/versions/0')).status, 422);
    assert.equal((await owner.get(`${base}/${v.id}/images?limit=0`)).status, 422);
    assert.equal((await owner.get(`${base}/${v.id}/images?split=holdout`)).status, 422);
    assert.equal((await owner.get(`${base}/${v.id}/diff/x`)).status, 422);
    assert.equal((await owner.get(`${base}/${v.id}/images/x/file`)).status, 422);
    assert.equal((await owner.post(`${base}/x/regenerate`)).status, 422);
    assert.equal((await owner.delete(`${base}/x`)).status, 422);
    assert.equal((await owner.post(base, { name: 'x'.repeat(201) })).status, 422);
  });
});
