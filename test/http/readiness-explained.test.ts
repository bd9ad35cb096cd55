import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject } from '../helpers/version-fixtures.js';

interface Check {
  id: string;
  passed: boolean;
  fix?: { text: string; actions: string[] };
}

/** Issue 30, item 5: a blocked gate explained in words, each failed check with its fix. */
describe('readiness explained', () => {
  let t: TestApp;
  let owner: Client;
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
  });
  after(() => t.close());

  const checkOf = (body: { checks: Check[] }, id: string) => body.checks.find((c) => c.id === id)!;

  it('an empty project: blocked, with "upload some" as the fix; passed checks carry no fix', async () => {
    const projectId = await createProject(owner, 'empty');
    const res = await owner.post(`/api/projects/${projectId}/readiness`, {});
    assert.equal(res.status, 200);
    assert.match(res.body.summary, /^Training is blocked: The project has no images — upload some/);
    assert.deepEqual(checkOf(res.body, 'has_images').fix, { text: 'The project has no images — upload some', actions: ['upload'] });
    assert.equal(checkOf(res.body, 'class_balance').passed, true);
    assert.equal(checkOf(res.body, 'class_balance').fix, undefined);
  });

  it('unlabelled uploads: says how many images have no labels and offers labelling or removing them', async () => {
    const projectId = await createProject(owner, 'uploads');
    const cls = await createClass(owner, projectId, 'cat');
    const labelled: number[] = [];
    for (let i = 0; i < 12; i++) labelled.push(await insertImageRow(t, projectId));
    for (const id of labelled) await addBox(owner, id, cls);
    await t.versa.deps.db.updateTable('images').set({ split: 'train' }).where('id', 'in', labelled.slice(0, 10)).execute();
    await t.versa.deps.db.updateTable('images').set({ split: 'valid' }).where('id', 'in', labelled.slice(10)).execute();
    const ready = await owner.post(`/api/projects/${projectId}/readiness`, {});
    assert.equal(ready.body.ready, true);
    assert.match(ready.body.summary, /^Ready to train with versa-detect/);

    // Two unlabelled uploads: below a gate of 90, not blocked.
    for (let i = 0; i < 2; i++) await insertImageRow(t, projectId);
    const below = await owner.post(`/api/projects/${projectId}/readiness`, { config: { min_readiness_score: 90 } });
    assert.equal(below.body.ready, false);
    assert.deepEqual(below.body.blockers, []);
    assert.equal(
      below.body.summary,
      'Readiness 85 is below the gate of 90: 2 images of 14 have no labels — label them, or remove them from the project (Clean → remove unannotated images)',
    );
    assert.deepEqual(checkOf(below.body, 'annotated_fraction').fix?.actions, ['label_unannotated', 'remove_unannotated']);

    // Enough of them to block.
    for (let i = 0; i < 11; i++) await insertImageRow(t, projectId);
    const blocked = await owner.post(`/api/projects/${projectId}/readiness`, {});
    assert.match(blocked.body.summary, /^Training is blocked: 13 images of 25 have no labels — label them, or remove them/);
  });

  it('an empty valid split: the fix names the Splits tab', async () => {
    const projectId = await createProject(owner, 'splits');
    const cls = await createClass(owner, projectId, 'cat');
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await insertImageRow(t, projectId));
    for (const id of ids) await addBox(owner, id, cls);
    await t.versa.deps.db.updateTable('images').set({ split: 'train' }).where('id', 'in', ids).execute();
    const res = await owner.post(`/api/projects/${projectId}/readiness`, {});
    const fix = checkOf(res.body, 'valid_split').fix!;
    assert.deepEqual(fix.actions, ['assign_splits']);
    assert.match(fix.text, /No image is in valid.*Splits tab/);
    assert.match(res.body.summary, /^Training is blocked: .*No image is in valid/);
  });
});
