import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject } from '../helpers/version-fixtures.js';

describe('readiness', () => {
  let t: TestApp;
  let owner: Client;
  let stranger: Client;
  let projectId: number;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    stranger = await t.user();
    projectId = await createProject(owner, 'readiness');
  });
  after(() => t.close());

  const readiness = (body: unknown = {}, client = owner) => client.post(`/api/projects/${projectId}/readiness`, body);

  it('an empty detection project is not ready, with blockers naming what is missing', async () => {
    const res = await readiness();
    assert.equal(res.status, 200);
    assert.equal(res.body.adapter, 'versa-detect');
    assert.equal(res.body.ready, false);
    assert.equal(res.body.threshold, 60);
    const failed = res.body.checks.filter((c: any) => !c.passed).map((c: any) => c.id);
    for (const id of ['has_images', 'has_boxes', 'train_split', 'valid_split']) assert.ok(failed.includes(id), id);
    assert.ok(res.body.blockers.some((b: string) => /no images/.test(b)));
    assert.equal(res.body.checks.reduce((s: number, c: any) => s + c.weight, 0), 100);
  });

  it('a detector gets ready once there are boxes in train and valid; the threshold is the caller\'s', async () => {
    const cls = await createClass(owner, projectId, 'cat');
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await insertImageRow(t, projectId));
    for (const id of ids) await addBox(owner, id, cls);
    await t.versa.deps.db.updateTable('images').set({ split: 'train' }).where('id', 'in', ids.slice(0, 10)).execute();
    let res = await readiness({ adapter: 'ultralytics' });
    assert.equal(res.body.ready, false);
    assert.deepEqual(res.body.blockers, ['The valid split is empty: nothing to measure the model on']);

    await t.versa.deps.db.updateTable('images').set({ split: 'valid' }).where('id', 'in', ids.slice(10)).execute();
    res = await readiness({ adapter: 'ultralytics' });
    assert.equal(res.body.ready, true);
    assert.equal(res.body.score, 100);
    assert.deepEqual(res.body.blockers, []);
    res = await readiness({ config: { min_instances_per_class: 50, min_readiness_score: 90 } });
    assert.equal(res.body.score, 85);
    assert.equal(res.body.ready, false);
    assert.equal(res.body.checks.find((c: any) => c.id === 'min_instances_per_class').passed, false);
  });

  it('a classifier needs enough images per class', async () => {
    const res = await readiness({ adapter: 'versa-classify', config: { min_images_per_class: 5 } });
    assert.equal(res.status, 200);
    assert.equal(res.body.adapter, 'versa-classify');
    assert.equal(res.body.ready, false);
    assert.ok(res.body.blockers.some((b: string) => /classification labels/.test(b)));
    assert.ok(res.body.blockers.some((b: string) => /at least 2 needed/.test(b)));
  });

  it('401 without credentials, 404 for a foreign project, 422 for bad config', async () => {
    assert.equal((await t.client().post(`/api/projects/${projectId}/readiness`, {})).status, 401);
    const foreign = await readiness({}, stranger);
    assert.equal(foreign.status, 404);
    assert.equal((await owner.post('/api/projects/999999/readiness', {})).status, 404);
    const bad = await readiness({ config: { min_readiness_score: 101 } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc.slice(0, 3), ['body', 'config', 'min_readiness_score']);
  });
});
