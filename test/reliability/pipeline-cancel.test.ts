/**
 * Issue 24, item 6: cancelling a pipeline run stops the running step (a webhook that never answers, a plugin step
 * that ignores its signal) within a second or two, and no step is left `running` after a cancel or a restart.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { eventually, serverProcess } from '../helpers/server-process.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/** A webhook receiver on 127.0.0.1 that reads each request and never answers; it notes when the caller hangs up. */
async function silentReceiver(): Promise<{ url: string; requests: IncomingMessage[]; hungUp: () => number; close: () => Promise<void> }> {
  const requests: IncomingMessage[] = [];
  let closed = 0;
  const server: Server = createServer((req) => {
    requests.push(req);
    req.resume();
    req.socket.once('close', () => closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/`,
    requests,
    hungUp: () => closed,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const hookPipeline = (url: string) => ({
  name: 'slow hook',
  steps: [{ id: 's', type: 'select_images' }, { id: 'w', type: 'webhook', needs: ['s'], params: { url } }, { id: 'r', type: 'report', needs: ['w'] }],
});

describe('cancelling a pipeline run', () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof silentReceiver>>;
  let alice: Awaited<ReturnType<TestApp['user']>>;
  let projectId: number;

  before(async () => {
    receiver = await silentReceiver();
    t = await startTestApp({ WEBHOOK_ALLOWLIST: receiver.url });
    await t.user();
    alice = await t.user();
    projectId = (await alice.post('/api/projects', { name: 'hooks' })).body.id;
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** Resolves once the queue has finished every job, or rejects after `ms`. */
  const drained = (ms: number) => Promise.race([t.versa.deps.queue.drain(), sleep(ms).then(() => Promise.reject(new Error(`the run's job was still going ${ms} ms after the cancel`)))]);

  it('stops a webhook step whose receiver never answers: cancelled within two seconds, no step running, the request aborted', async () => {
    const pipeline = (await alice.post('/api/pipelines', { project_id: projectId, definition: hookPipeline(`${receiver.url}run`) })).body;
    const run = (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body;
    await eventually(async () => receiver.requests.length === 1, 10_000, 'the webhook request');
    const running = (await alice.get(`/api/pipeline-runs/${run.id}`)).body;
    assert.equal(running.steps[1].status, 'running');

    const cancelledAt = Date.now();
    const cancelled = await alice.post(`/api/pipeline-runs/${run.id}/cancel`);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, 'cancelled');
    assert.deepEqual(cancelled.body.steps.map((s: { status: string }) => s.status), ['succeeded', 'cancelled', 'cancelled'], 'the answer to the cancel shows no step running');

    await drained(2_000);
    const done = (await alice.get(`/api/pipeline-runs/${run.id}`)).body;
    assert.equal(done.status, 'cancelled');
    assert.deepEqual(done.steps.map((s: { status: string }) => s.status), ['succeeded', 'cancelled', 'cancelled']);
    assert.ok(done.steps[1].finished_at !== null);
    await eventually(async () => receiver.hungUp() === 1, 2_000, 'the webhook request to be aborted');
    assert.ok(Date.now() - cancelledAt < 2_500, `stopped ${Date.now() - cancelledAt} ms after the cancel`);
  });

  it('stops a plugin step that ignores its signal', async () => {
    let started!: () => void;
    const entered = new Promise<void>((resolve) => (started = resolve));
    t.versa.deps.plugins.register({
      type: 'pipeline_step',
      name: 'test_stuck',
      title: 'stuck',
      description: 'never finishes and never looks at its signal',
      version: '1.0.0',
      builtin: false,
      config_schema: { type: 'object' },
      step: {
        inputs: [],
        outputs: [],
        writes: false,
        execute() {
          started();
          return new Promise(() => undefined);
        },
      },
    });
    const pipeline = (await alice.post('/api/pipelines', { project_id: projectId, definition: { name: 'stuck', steps: [{ id: 'x', type: 'test_stuck' }] } })).body;
    const run = (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body;
    await entered;
    assert.equal((await alice.post(`/api/pipeline-runs/${run.id}/cancel`)).status, 200);
    await drained(2_000);
    const done = (await alice.get(`/api/pipeline-runs/${run.id}`)).body;
    assert.equal(done.status, 'cancelled');
    assert.equal(done.steps[0].status, 'cancelled');
  });

  if (process.env.REDIS_URL) {
    it("leaves another worker's running run alone when a process starts", async () => {
      const pipeline = (await alice.post('/api/pipelines', { project_id: projectId, definition: hookPipeline(`${receiver.url}live`) })).body;
      const run = (await alice.post(`/api/pipelines/${pipeline.id}/run`, {})).body;
      await eventually(async () => (await alice.get(`/api/pipeline-runs/${run.id}`)).body.steps[1].status === 'running', 10_000, 'the webhook step');
      const other = await buildApp(t.config, { database: { ...t.versa.database, close: async () => {} }, logger: false });
      await other.app.ready();
      await other.app.close();
      assert.equal((await alice.get(`/api/pipeline-runs/${run.id}`)).body.status, 'running', 'a start does not fail a live run');
      assert.equal((await alice.post(`/api/pipeline-runs/${run.id}/cancel`)).status, 200);
      await drained(2_000);
    });
  }
});

describe('a pipeline run killed with its process', { timeout: 120_000 }, () => {
  it('is failed at the next start, with no step left running', async () => {
    const receiver = await silentReceiver();
    const server = await serverProcess({ WEBHOOK_ALLOWLIST: receiver.url });
    try {
      let token = await server.login('pipelines@example.com');
      const project = (await server.api('POST', '/api/projects', { name: 'killed' }, token)).body.id as number;
      const pipeline = (await server.api('POST', '/api/pipelines', { project_id: project, definition: hookPipeline(`${receiver.url}kill`) }, token)).body;
      const run = (await server.api('POST', `/api/pipelines/${pipeline.id}/run`, {}, token)).body;
      await eventually(async () => receiver.requests.length === 1, 20_000, 'the webhook request');
      assert.equal((await server.api('GET', `/api/pipeline-runs/${run.id}`, undefined, token)).body.steps[1].status, 'running');

      await server.kill();
      await server.start();
      token = await server.login('pipelines@example.com');
      const after = (await server.api('GET', `/api/pipeline-runs/${run.id}`, undefined, token)).body;
      assert.equal(after.status, 'failed');
      assert.match(after.error, /interrupted by a restart/);
      assert.deepEqual(after.steps.map((s: { status: string }) => s.status), ['succeeded', 'failed', 'skipped']);
      assert.match(after.steps[1].error, /interrupted by a restart/);
      assert.equal(await server.count(`select count(*) from pipeline_runs where steps like '%"status":"running"%'`), 0);
    } finally {
      await server.dispose();
      await receiver.close();
    }
  });
});
