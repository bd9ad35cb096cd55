/**
 * Drill (issue 24, item 11): blockers that make training pointless block whatever the score. A detection project 33%
 * annotated with a class missing from valid scored 60 against the default threshold of 60 and was ready; so was a
 * tabular project 40% labelled, which the training gate let through. Now both are refused by the default gate with
 * the blocker named, as is a class with only a handful of instances in train; a healthy project still passes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject } from '../helpers/version-fixtures.js';

describe('readiness blockers', { timeout: 120_000 }, () => {
  let t: TestApp;
  let owner: Client;

  before(async () => {
    t = await startTestApp();
    await t.user();
    owner = await t.user();
  });
  after(() => t.close());

  /** `count` image rows in `split`, each with `boxes` boxes of `classId` (none when 0). */
  async function images(projectId: number, split: 'train' | 'valid', count: number, classId?: number, boxes = 0): Promise<void> {
    for (let i = 0; i < count; i++) {
      const id = await insertImageRow(t, projectId);
      for (let b = 0; b < boxes; b++) await addBox(owner, id, classId!);
      await t.versa.deps.db.updateTable('images').set({ split }).where('id', '=', id).execute();
    }
  }

  const readiness = (projectId: number) => owner.post(`/api/projects/${projectId}/readiness`, {});

  it('33% annotated with a class missing from valid: score 60 at the default threshold, refused with the blockers named', async () => {
    const projectId = await createProject(owner, 'a third annotated');
    const cat = await createClass(owner, projectId, 'cat');
    await images(projectId, 'train', 4, cat, 2);
    await images(projectId, 'train', 4);
    await images(projectId, 'valid', 4);
    const res = await readiness(projectId);
    assert.equal(res.status, 200);
    assert.equal(res.body.threshold, 60);
    assert.equal(res.body.score, 60);
    assert.equal(res.body.ready, false);
    assert.deepEqual(res.body.blockers, [
      '33% of images are annotated (90% wanted; under 50% there is too little to learn from)',
      'Missing from valid, so the model cannot be measured on them: cat',
    ]);
  });

  it('a class with fewer than a handful of instances in train blocks; fewer than min_instances_per_class only costs score', async () => {
    const projectId = await createProject(owner, 'a handful');
    const cat = await createClass(owner, projectId, 'cat');
    const dog = await createClass(owner, projectId, 'dog');
    await images(projectId, 'train', 8, cat, 1);
    await images(projectId, 'train', 2, dog, 1);
    await images(projectId, 'valid', 1, cat, 1);
    await images(projectId, 'valid', 1, dog, 1);
    const res = await readiness(projectId);
    assert.equal(res.body.ready, false);
    assert.deepEqual(res.body.blockers, ['Fewer than 5 instances in train, too few to learn from: dog']);
    const lower = await owner.post(`/api/projects/${projectId}/readiness`, { config: { min_instances_per_class: 2 } });
    assert.deepEqual(lower.body.blockers, [], 'a configured minimum under the handful lowers the bar');
  });

  it('a healthy project passes the default gate', async () => {
    const projectId = await createProject(owner, 'healthy');
    const cat = await createClass(owner, projectId, 'cat');
    await images(projectId, 'train', 10, cat, 1);
    await images(projectId, 'valid', 2, cat, 1);
    const res = await readiness(projectId);
    assert.deepEqual(res.body.blockers, []);
    assert.equal(res.body.score, 100);
    assert.equal(res.body.ready, true);
  });

  it('the training gate refuses a tabular project 40% labelled (score 80) with the blocker named, and starts nothing', async () => {
    const projectId = (await owner.post('/api/projects', { name: 'mostly unlabelled', project_type: 'classification' })).body.id as number;
    // 60 rows, 24 labelled: 12 per class, enough per class; the rest have no target value.
    const rows = Array.from({ length: 60 }, (_, i) => `${i},${i % 5 < 3 ? '' : i % 2 ? 'odd' : 'even'}`);
    const { payload, headers } = multipart([{ name: 'file', filename: 'table.csv', data: Buffer.from(['n,parity', ...rows].join('\n')), contentType: 'text/csv' }], { target: 'parity' });
    assert.equal((await owner.request({ method: 'POST', url: `/api/projects/${projectId}/import/tabular`, payload, headers })).status, 201);
    assert.equal((await owner.post(`/api/projects/${projectId}/samples/splits`, { train: 70, valid: 15, test: 15, seed: 3 })).status, 200);
    const gated = await owner.post(`/api/projects/${projectId}/adapters/train`, { adapter: 'tabular' });
    assert.equal(gated.status, 409, JSON.stringify(gated.body));
    assert.equal(gated.body.readiness.score, 80);
    assert.deepEqual(gated.body.readiness.blockers, ['40% of tabular samples are labelled (90% wanted; under 50% there is too little to learn from)']);
    assert.match(gated.body.detail, /40% of tabular samples are labelled/);
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/experiments`)).body, []);
  });
});
