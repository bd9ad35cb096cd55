import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject, nearCopy, smoothImage, uploadImages } from '../helpers/version-fixtures.js';

async function splitsOf(t: TestApp, projectId: number): Promise<Map<number, string | null>> {
  const rows = await t.versa.deps.db.selectFrom('images').select(['id', 'split']).where('project_id', '=', projectId).orderBy('id').execute();
  return new Map(rows.map((r) => [r.id, r.split]));
}

describe('splits', () => {
  let t: TestApp;
  let owner: Client;
  let other: Client;
  let projectId: number;
  let imageIds: number[];

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    other = await t.user();
    projectId = await createProject(owner);
    const files = await Promise.all(Array.from({ length: 20 }, async (_, i) => ({ name: `img${i}.jpg`, data: await smoothImage(i) })));
    imageIds = (await uploadImages(owner, projectId, files)).map((image) => image.id);
  });
  after(() => t.close());

  it('reports current counts, with unassigned images', async () => {
    const res = await owner.get(`/api/projects/${projectId}/splits`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { counts: { train: 0, valid: 0, test: 0 }, unassigned: 20, total: 20 });
  });

  it('splits at random by the percentages, and the same seed gives the same split', async () => {
    const res = await owner.post(`/api/projects/${projectId}/splits?train=60&valid=25&test=15&seed=42`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { counts: { train: 12, valid: 5, test: 3 }, seed: 42, strategy: 'random' });
    const first = await splitsOf(t, projectId);
    assert.equal([...first.values()].filter((s) => s === 'train').length, 12);

    const other = await owner.post(`/api/projects/${projectId}/splits?train=60&valid=25&test=15&seed=7`);
    assert.equal(other.status, 200);
    assert.notDeepEqual(await splitsOf(t, projectId), first);

    await owner.post(`/api/projects/${projectId}/splits?train=60&valid=25&test=15&seed=42`);
    assert.deepEqual(await splitsOf(t, projectId), first);
    const counts = await owner.get(`/api/projects/${projectId}/splits`);
    assert.deepEqual(counts.body, { counts: { train: 12, valid: 5, test: 3 }, unassigned: 0, total: 20 });
  });

  it('draws and reports a seed when none is given; defaults to random 70/20/10', async () => {
    const res = await owner.post(`/api/projects/${projectId}/splits`);
    assert.equal(res.status, 200);
    assert.equal(res.body.strategy, 'random');
    assert.equal(typeof res.body.seed, 'number');
    assert.deepEqual(res.body.counts, { train: 14, valid: 4, test: 2 });
    const again = await owner.post(`/api/projects/${projectId}/splits?seed=${res.body.seed}`);
    assert.deepEqual(again.body.counts, res.body.counts);
  });

  it('stratified keeps each class in proportion in every split', async () => {
    const cat = await createClass(owner, projectId, 'cat');
    const dog = await createClass(owner, projectId, 'dog');
    // 10 images with cats, 5 of them also with dogs, 5 with dogs only, 5 unannotated.
    for (let i = 0; i < 10; i++) await addBox(owner, imageIds[i], cat);
    for (let i = 5; i < 15; i++) await addBox(owner, imageIds[i], dog);
    const res = await owner.post(`/api/projects/${projectId}/splits?train=60&valid=20&test=20&strategy=stratified&seed=3`);
    assert.equal(res.status, 200);
    assert.equal(res.body.strategy, 'stratified');
    assert.deepEqual(res.body.counts, { train: 12, valid: 4, test: 4 });
    assert.deepEqual(res.body.per_class, { cat: { train: 6, valid: 2, test: 2 }, dog: { train: 6, valid: 2, test: 2 } });
    const splits = await splitsOf(t, projectId);
    const catsInTrain = imageIds.slice(0, 10).filter((id) => splits.get(id) === 'train').length;
    assert.equal(catsInTrain, 6);
  });

  it('grouped keeps near-duplicate images in the same split, and caches the hashes', async () => {
    const project = await createProject(owner, 'grouped');
    const originals = await Promise.all(Array.from({ length: 12 }, (_, i) => smoothImage(100 + i, 200, 150)));
    const copies = await Promise.all(originals.slice(0, 4).map((image) => nearCopy(image, 180, 135)));
    const images = await uploadImages(owner, project, [
      ...originals.map((data, i) => ({ name: `o${i}.jpg`, data })),
      ...copies.map((data, i) => ({ name: `copy${i}.jpg`, data })),
    ]);
    for (const seed of [1, 2, 3, 4, 5]) {
      const res = await owner.post(`/api/projects/${project}/splits?train=50&valid=25&test=25&strategy=grouped&seed=${seed}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.groups, 4);
      assert.equal(res.body.counts.train + res.body.counts.valid + res.body.counts.test, 16);
      const splits = await splitsOf(t, project);
      for (let i = 0; i < 4; i++) assert.equal(splits.get(images[12 + i].id), splits.get(images[i].id), `copy ${i} left its original (seed ${seed})`);
      assert.ok(new Set(splits.values()).size >= 2, 'a grouped split still spreads the images');
    }
    const cached = await t.versa.deps.db.selectFrom('image_phashes').select('image_id').where('image_id', 'in', images.map((i) => i.id)).execute();
    assert.equal(cached.length, 16);
  });

  it('refuses percentages that do not add up to 100 or are out of range, changing nothing (422)', async () => {
    const before = await splitsOf(t, projectId);
    const sum = await owner.post(`/api/projects/${projectId}/splits?train=70&valid=20&test=20`);
    assert.equal(sum.status, 422);
    assert.deepEqual(sum.body.detail[0].loc, ['query']);
    assert.match(sum.body.detail[0].msg, /100/);
    const range = await owner.post(`/api/projects/${projectId}/splits?train=120&valid=-10&test=-10`);
    assert.equal(range.status, 422);
    assert.ok(range.body.detail.some((d: any) => d.loc.join('.') === 'query.train'));
    const strategy = await owner.post(`/api/projects/${projectId}/splits?strategy=alphabetical`);
    assert.equal(strategy.status, 422);
    assert.equal((await owner.post(`/api/projects/${projectId}/splits?train=a`)).status, 422);
    assert.equal((await owner.post(`/api/projects/abc/splits`)).status, 422);
    assert.equal((await owner.get(`/api/projects/0/splits`)).status, 422);
    assert.deepEqual(await splitsOf(t, projectId), before);
  });

  it('needs credentials (401) and hides other users\' and unknown projects (404)', async () => {
    const before = await splitsOf(t, projectId);
    assert.equal((await t.client().get(`/api/projects/${projectId}/splits`)).status, 401);
    assert.equal((await t.client().post(`/api/projects/${projectId}/splits?seed=1`)).status, 401);
    assert.equal((await other.get(`/api/projects/${projectId}/splits`)).status, 404);
    const hidden = await other.post(`/api/projects/${projectId}/splits?seed=1`);
    assert.equal(hidden.status, 404);
    assert.equal(hidden.body.detail, `Project ${projectId} not found`);
    assert.equal((await owner.post(`/api/projects/999999/splits`)).status, 404);
    assert.equal((await owner.get(`/api/projects/999999/splits`)).status, 404);
    assert.deepEqual(await splitsOf(t, projectId), before);
  });
});
