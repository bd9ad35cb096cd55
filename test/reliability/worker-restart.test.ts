/**
 * Drill (issue 11, High 5): a process that starts must not fail the jobs and generations other workers are running.
 * With Redis, BullMQ's stalled-job check owns that (a job whose worker died is re-queued); without Redis the
 * in-process queue's jobs die with their process, so a start fails its own interrupted ones. Each case runs in the
 * configuration it is about: the Redis case where REDIS_URL is set (the tier-2 run), the in-process case always.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

async function runningWork(t: TestApp): Promise<{ jobId: number; versionId: number; trainingIds: number[] }> {
  const owner = await t.user();
  const projectId = (await owner.post('/api/projects', { name: 'busy worker' })).body.id as number;
  const db = t.versa.deps.db;
  const now = new Date().toISOString();
  // A generation another worker is running right now: its job and version rows say so.
  const job = await db
    .insertInto('jobs')
    .values({ name: 'versions.generate', payload: '{}', status: 'running', progress: 0.4, result: null, error: null, project_id: projectId, created_by: owner.id, created_at: now, started_at: now, finished_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  const version = await db
    .insertInto('versions')
    .values({
      project_id: projectId, number: 1, name: 'v1', notes: '', seed: 1, split_config: '{}', preprocessing_config: '{}', augmentation_config: '{}',
      status: 'generating', progress: 0.4, job_id: job.id, image_counts: '{}', created_by: owner.id, created_at: now,
    } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
  // Two training runs: one a worker is running, one queued behind it (issue 27: a start failed both).
  const trainingIds: number[] = [];
  for (const status of ['running', 'queued'] as const) {
    const trainJob = await db
      .insertInto('jobs')
      .values({ name: 'train', payload: '{}', status, progress: 0, result: null, error: null, project_id: projectId, created_by: owner.id, created_at: now, started_at: status === 'running' ? now : null, finished_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const experiment = await db
      .insertInto('experiments')
      .values({
        project_id: projectId, version_id: version.id, job_id: trainJob.id, model_id: null, name: `run ${status}`, tags: '[]', notes: '', status, adapter: 'detect',
        params: '{}', metrics: '{}', history: '[]', per_class: '{}', extra: '{}', best_epoch: null, epoch: 0, error: null, run_dir: null, created_by: owner.id, created_at: now,
        finished_at: null, duration_s: null,
      } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    trainingIds.push(experiment.id);
  }
  return { jobId: job.id, versionId: version.id, trainingIds };
}

const experimentStatuses = (t: TestApp, ids: number[]) =>
  Promise.all(ids.map(async (id) => (await t.versa.deps.db.selectFrom('experiments').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status));

/** Starts a second process's app on the same database (its close leaves the shared database open). */
async function startAnotherProcess(t: TestApp): Promise<() => Promise<void>> {
  const database = { ...t.versa.database, close: async () => {} };
  const other = await buildApp(t.config, { database, logger: false });
  await other.app.ready();
  return () => other.app.close();
}

if (process.env.REDIS_URL) {
  describe('with Redis: a starting process leaves other workers running', () => {
    let t: TestApp;
    before(async () => (t = await startTestApp()));
    after(() => t.close());

    it('the running job, its generating version and the training runs are untouched by the start', async () => {
      const { jobId, versionId, trainingIds } = await runningWork(t);
      const stop = await startAnotherProcess(t);
      try {
        const db = t.versa.deps.db;
        assert.equal((await db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow()).status, 'running');
        assert.equal((await db.selectFrom('versions').select('status').where('id', '=', versionId).executeTakeFirstOrThrow()).status, 'generating');
        assert.deepEqual(await experimentStatuses(t, trainingIds), ['running', 'queued']);
      } finally {
        await stop();
      }
    });
  });
}

describe('without Redis: a start fails its own interrupted work', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ REDIS_URL: '' })));
  after(() => t.close());

  it('the interrupted job, version and training runs are failed, so the version can be regenerated', async () => {
    const { jobId, versionId, trainingIds } = await runningWork(t);
    const stop = await startAnotherProcess(t);
    try {
      const db = t.versa.deps.db;
      assert.equal((await db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow()).status, 'failed');
      assert.equal((await db.selectFrom('versions').select('status').where('id', '=', versionId).executeTakeFirstOrThrow()).status, 'failed');
      assert.deepEqual(await experimentStatuses(t, trainingIds), ['failed', 'failed']);
    } finally {
      await stop();
    }
  });
});
