import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

/** Issue 30, item 7: a classification project chooses single- or multi-label. */
describe('projects: multi_label', () => {
  let t: TestApp;
  let owner: Client;
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
  });
  after(() => t.close());

  it('defaults to single-label, is chosen at creation and changed by PATCH; a bad value is 422 and changes nothing', async () => {
    const single = await owner.post('/api/projects', { name: 'pets', project_type: 'classification' });
    assert.equal(single.status, 201);
    assert.equal(single.body.multi_label, false);
    const multi = await owner.post('/api/projects', { name: 'tags', project_type: 'classification', multi_label: true });
    assert.equal(multi.body.multi_label, true);
    assert.equal((await owner.get(`/api/projects/${multi.body.id}`)).body.multi_label, true);

    const patched = await owner.patch(`/api/projects/${single.body.id}`, { multi_label: true });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.multi_label, true);
    const bad = await owner.patch(`/api/projects/${single.body.id}`, { multi_label: 'yes' });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ['body', 'multi_label']);
    assert.equal((await owner.get(`/api/projects/${single.body.id}`)).body.multi_label, true);
    // Other settings leave it alone.
    assert.equal((await owner.patch(`/api/projects/${single.body.id}`, { name: 'pets 2' })).body.multi_label, true);
  });

  it('only who may update the project changes it (a viewer gets 403)', async () => {
    const project = await owner.post('/api/projects', { name: 'p', project_type: 'classification' });
    const viewer = await t.user();
    await owner.post(`/api/projects/${project.body.id}/members`, { email: viewer.email, role: 'viewer' });
    assert.equal((await viewer.patch(`/api/projects/${project.body.id}`, { multi_label: true })).status, 403);
    assert.equal((await owner.get(`/api/projects/${project.body.id}`)).body.multi_label, false);
  });
});
