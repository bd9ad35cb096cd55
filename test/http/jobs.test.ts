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

  it('cancels queued and running jobs: the running handler sees its signal abort, both end cancelled', async () => {
    const owner = await t.user();
    const viewer = await t.user();
    const { body: project } = await owner.post('/api/projects', { name: 'cancel' });
    await owner.post(`/api/projects/${project.id}/members`, { user_id: viewer.id, role: 'viewer' });
    let aborted = false;
    let secondRan = false;
    t.versa.deps.queue.register<null>('test-wait', async ({ signal, report }) => {
      await report({ progress: 0.25, message: 'waiting', eta_seconds: 30 });
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
      return 'stopped';
    });
    t.versa.deps.queue.register<null>('test-second', async () => {
      secondRan = true;
    });
    const running = await t.versa.deps.queue.enqueue('test-wait', null, { projectId: project.id, createdBy: owner.id });
    const queued = await t.versa.deps.queue.enqueue('test-second', null, { projectId: project.id, createdBy: owner.id });
    for (let i = 0; i < 100 && (await owner.get(`/api/jobs/${running.id}`)).body.message !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 50));
    const live = (await owner.get(`/api/jobs/${running.id}`)).body;
    assert.deepEqual([live.kind, live.status, live.progress, live.message, live.eta_seconds], ['test-wait', 'running', 0.25, 'waiting', 30]);

    assert.equal((await t.client().post(`/api/jobs/${queued.id}/cancel`)).status, 401);
    assert.equal((await viewer.post(`/api/jobs/${queued.id}/cancel`)).status, 403);
    assert.equal((await owner.post('/api/jobs/999999/cancel')).status, 404);
    assert.equal((await owner.post('/api/jobs/x/cancel')).status, 422);
    const cancelledQueued = await owner.post(`/api/jobs/${queued.id}/cancel`);
    assert.equal(cancelledQueued.status, 200);
    assert.equal(cancelledQueued.body.status, 'cancelled');
    const cancelledRunning = await owner.post(`/api/jobs/${running.id}/cancel`);
    assert.equal(cancelledRunning.status, 200);
    assert.equal(cancelledRunning.body.status, 'cancelled');
    assert.equal(cancelledRunning.body.result, null);
    await t.versa.deps.queue.drain();
    assert.equal(aborted, true);
    assert.equal(secondRan, false, 'a cancelled queued job never runs');
    assert.equal((await owner.post(`/api/jobs/${running.id}/cancel`)).status, 409);
  });

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
