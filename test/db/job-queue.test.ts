import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { BullmqQueue } from '../../src/jobs/bullmq-queue.js';
import { InProcessQueue } from '../../src/jobs/in-process-queue.js';
import type { JobQueue } from '../../src/jobs/job-queue.js';
import { JobsRepository, RELEASED_MESSAGE } from '../../src/jobs/jobs.repository.js';
import { Metrics } from '../../src/lib/metrics.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { eventually } from '../helpers/server-process.js';
import { openTestDatabase } from '../helpers/test-app.js';

const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {}, child() { return silent; }, level: 'silent' } as any;

/** A queue; `prefix` names the Redis keys, so that a second queue of the same prefix is the next process's. */
const implementations: [string, (jobs: JobsRepository, prefix?: string, metrics?: Metrics) => JobQueue][] = [
  ['in-process', (jobs, _prefix, metrics = new Metrics()) => new InProcessQueue({ jobs, log: silent, metrics })],
];
if (process.env.REDIS_URL) {
  const redisUrl = process.env.REDIS_URL;
  implementations.push([
    'bullmq',
    (jobs, prefix = `versa-test-${randomBytes(6).toString('hex')}`, metrics = new Metrics()) => new BullmqQueue({ jobs, log: silent, metrics }, { redisUrl, prefix, work: true }),
  ]);
}

for (const [implementation, makeQueue] of implementations) describe(`${implementation} job queue`, () => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  let dir: string;
  let jobs: JobsRepository;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-jobs-'));
    ({ database, drop } = await openTestDatabase(dir));
    jobs = new JobsRepository(database.db);
  });
  after(async () => {
    await database.close();
    await drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a job, records progress and its result', async () => {
    const queue = makeQueue(jobs);
    const seen: number[] = [];
    queue.register<{ n: number }>('double', async ({ payload, progress }) => {
      await progress(0.5);
      seen.push(payload.n);
      return { value: payload.n * 2 };
    });
    const job = await queue.enqueue('double', { n: 21 }, { createdBy: null });
    assert.equal(job.status, 'queued');
    await queue.drain();
    const done = await jobs.find(job.id);
    assert.equal(done?.status, 'succeeded');
    assert.equal(done?.progress, 1);
    assert.deepEqual(JSON.parse(done!.result!), { value: 42 });
    assert.ok(done?.started_at && done.finished_at);
    assert.deepEqual(seen, [21]);
    await queue.close();
  });

  it('records a failing job with its error and keeps running later jobs', async () => {
    const queue = makeQueue(jobs);
    queue.register('explode', async () => {
      throw new Error('boom');
    });
    queue.register('ok', async () => 'fine');
    const bad = await queue.enqueue('explode', {});
    const good = await queue.enqueue('ok', {});
    await queue.drain();
    const failed = await jobs.find(bad.id);
    assert.equal(failed?.status, 'failed');
    assert.equal(failed?.error, 'boom');
    assert.equal((await jobs.find(good.id))?.status, 'succeeded');
    await queue.close();
  });

  it('refuses unknown job names and duplicate handlers', async () => {
    const queue = makeQueue(jobs);
    await assert.rejects(queue.enqueue('nobody-handles-this', {}), /no handler/);
    queue.register('once', async () => undefined);
    assert.throws(() => queue.register('once', async () => undefined), /registered twice/);
    await queue.close();
  });

  it('runs jobs one at a time in enqueue order by default', async () => {
    const queue = makeQueue(jobs);
    const order: string[] = [];
    let active = 0;
    let maxActive = 0;
    queue.register<string>('step', async ({ payload }) => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((r) => setTimeout(r, 5));
      order.push(payload);
      active--;
    });
    for (const name of ['a', 'b', 'c']) await queue.enqueue('step', name);
    await queue.drain();
    assert.deepEqual(order, ['a', 'b', 'c']);
    assert.equal(maxActive, 1);
    await queue.close();
  });

  it('runs a held record only once it is submitted, and skips one cancelled before its turn', async () => {
    const queue = makeQueue(jobs);
    const ran: string[] = [];
    queue.register<string>('held', async ({ payload }) => void ran.push(payload));
    const later = await jobs.create('held', 'later', null, null);
    const dropped = await jobs.create('held', 'dropped', null, null);
    await queue.enqueue('held', 'now');
    await queue.drain();
    assert.deepEqual(ran, ['now']);
    assert.equal((await jobs.find(later.id))?.status, 'queued', 'a record not submitted waits');
    await jobs.requestCancel(dropped.id);
    await queue.submit(dropped);
    await queue.submit(later);
    await queue.drain();
    assert.deepEqual(ran, ['now', 'later']);
    assert.equal((await jobs.find(later.id))?.status, 'succeeded');
    assert.equal((await jobs.find(dropped.id))?.status, 'cancelled');
    await assert.rejects(queue.submit({ ...later, name: 'nobody-handles-this' }), /no handler/);
    await queue.close();
  });

  it('releases a running job at shutdown: queued again, not failed, and run from the start by the next process', async () => {
    const prefix = `versa-test-${randomBytes(6).toString('hex')}`;
    const metrics = new Metrics();
    const first = makeQueue(jobs, prefix, metrics);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    first.register('long', ({ signal }) => {
      started();
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
    const job = await first.enqueue('long', { n: 1 });
    await running;
    const closed = first.close();
    first.release();
    await closed;
    const released = await jobs.find(job.id);
    assert.equal(released?.status, 'queued');
    assert.equal(released?.message, RELEASED_MESSAGE);
    assert.match(await metrics.text(), /versa_job_duration_seconds_count\{name="long",outcome="released"\} 1/);
    // The in-process queue's start-up sweep leaves it (and fails what a killed process left).
    await jobs.failInterrupted();
    assert.equal((await jobs.find(job.id))?.status, 'queued');

    const next = makeQueue(jobs, prefix);
    next.register<{ n: number }>('long', async ({ payload }) => payload.n + 1);
    if (next instanceof InProcessQueue) await next.resume();
    await eventually(async () => (await jobs.find(job.id))?.status === 'succeeded');
    assert.equal((await jobs.find(job.id))?.result, '2');
    await next.close();
  });

  it('fails jobs left queued or running by a previous process', async () => {
    const stale = await jobs.create('double', {}, null, null);
    await jobs.failInterrupted();
    const row = await jobs.find(stale.id);
    assert.equal(row?.status, 'failed');
    assert.match(row!.error!, /restart/);
  });
});
