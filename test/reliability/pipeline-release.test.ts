/**
 * Issue 27: a pipeline run whose job a shutdown releases goes back to the queue with its job (`queued`, its steps
 * pending), not `cancelled`, and runs again from its first step in the next process that takes the job — as every
 * released job does. (A run whose worker died is taken over the same way: its job comes back while the run says
 * running, and the run starts over.)
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { eventually } from '../helpers/server-process.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('a pipeline run released by a shutdown', () => {
  let t: TestApp;
  let server: Server;
  const requests: IncomingMessage[] = [];
  let url = '';

  before(async () => {
    // A webhook receiver that never answers: the run's step stays running until something stops it.
    server = createServer((req) => {
      requests.push(req);
      req.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/`;
    t = await startTestApp({ WEBHOOK_ALLOWLIST: url });
  });
  after(async () => {
    await t.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('goes back to queued with its job, and a later process runs it again from its first step', async () => {
    await t.user();
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'released' })).body.id;
    const definition = { name: 'hook', steps: [{ id: 's', type: 'select_images' }, { id: 'w', type: 'webhook', needs: ['s'], params: { url: `${url}run` } }] };
    const pipeline = (await alice.post('/api/pipelines', { project_id: projectId, definition })).body;
    const run = (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body;
    await eventually(async () => requests.length === 1, 10_000, 'the webhook request');
    const db = t.versa.deps.db;
    const jobId = (await db.selectFrom('pipeline_runs').select('job_id').where('id', '=', run.id).executeTakeFirstOrThrow()).job_id!;

    // A shutdown stops taking jobs, then releases the running ones at its deadline. (With Redis a worker that still
    // took jobs would take the released one straight back and, its release already signalled, release it again.)
    const closing = process.env.REDIS_URL ? t.versa.deps.queue.close() : Promise.resolve();
    t.versa.deps.queue.release();
    await closing;
    const state = async () => {
      const row = (await alice.get(`/api/pipeline-runs/${run.id}`)).body;
      const job = await db.selectFrom('jobs').select(['status', 'message']).where('id', '=', jobId).executeTakeFirstOrThrow();
      return { run: row.status as string, steps: (row.steps as { status: string }[]).map((s) => s.status), job: job.status };
    };
    if (!process.env.REDIS_URL) {
      // The in-process queue keeps a released job until the next start: both records say queued, nothing cancelled.
      await eventually(async () => (await state()).run === 'queued', 10_000, 'the run to be queued again');
      assert.deepEqual(await state(), { run: 'queued', steps: ['pending', 'pending'], job: 'queued' });
      const other = await buildApp(t.config, { database: { ...t.versa.database, close: async () => {} }, logger: false });
      await other.app.ready();
      try {
        await eventually(async () => requests.length === 2, 20_000, 'the run to start over in the next process');
        assert.deepEqual(await state(), { run: 'running', steps: ['succeeded', 'running'], job: 'running' });
        assert.equal((await alice.post(`/api/pipeline-runs/${run.id}/cancel`)).status, 200);
        await eventually(async () => { const now = await state(); return now.run === 'cancelled' && !['queued', 'running'].includes(now.job); }, 10_000, 'the cancel');
      } finally {
        await other.app.close();
      }
    } else {
      // With Redis the released job is back on the wait list at once, and the next process's worker takes it.
      const other = await buildApp(t.config, { database: { ...t.versa.database, close: async () => {} }, logger: false });
      await other.app.ready();
      try {
        await eventually(async () => requests.length === 2, 20_000, 'the run to start over in the next process');
        const running = JSON.stringify({ run: 'running', steps: ['succeeded', 'running'], job: 'running' });
        await eventually(async () => JSON.stringify(await state()) === running, 10_000, 'the run and its job to be running');
        assert.equal((await alice.post(`/api/pipeline-runs/${run.id}/cancel`)).status, 200);
        await eventually(async () => { const now = await state(); return now.run === 'cancelled' && !['queued', 'running'].includes(now.job); }, 10_000, 'the cancel');
      } finally {
        await other.app.close();
      }
    }
    assert.notEqual((await state()).run, 'failed');
  });
});
