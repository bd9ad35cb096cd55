import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('jobs route', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    t.versa.deps.queue.register<{ n: number }>('test-square', async ({ payload }) => ({ square: payload.n ** 2 }));
  });
  after(() => t.close());

  it('shows a project job to people who can read the project, and 404 to others', async () => {
    await t.user(); // instance admin
    const owner = await t.user();
    const stranger = await t.user();
    const { body: project } = await owner.post('/api/projects', { name: 'jobs' });
    const job = await t.versa.deps.queue.enqueue('test-square', { n: 7 }, { projectId: project.id, createdBy: owner.id });
    await t.versa.deps.queue.drain();
    const res = await owner.get(`/api/jobs/${job.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'succeeded');
    assert.equal(res.body.progress, 1);
    assert.deepEqual(res.body.result, { square: 49 });
    assert.equal(res.body.project_id, project.id);
    assert.equal((await stranger.get(`/api/jobs/${job.id}`)).status, 404);
    assert.equal((await owner.get('/api/jobs/999999')).status, 404);
    assert.equal((await owner.get('/api/jobs/x')).status, 422);
    assert.equal((await t.client().get(`/api/jobs/${job.id}`)).status, 401);
  });
});
