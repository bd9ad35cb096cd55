import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { FINISHED_STATUSES, type EnqueueOptions, type JobHandler, type JobQueue, type JobRow } from './job-queue.js';
import type { JobsRepository } from './jobs.repository.js';
import { runJob } from './run-job.js';

const QUEUE_NAME = 'versa-jobs';
const DRAIN_POLL_MS = 50;
const CLOSE_GRACE_MS = 2000;

export interface BullmqQueueOptions {
  redisUrl: string;
  /** Key prefix in Redis, so that several instances (or test files) can share one server. */
  prefix: string;
  /** Whether this process takes jobs (roles `worker` and `all`) or only enqueues them (`api`). */
  work: boolean;
  concurrency?: number;
}

/**
 * Jobs distributed through BullMQ on Redis: any process enqueues, processes with the worker role run them. BullMQ
 * carries only the job id; payload, status, progress and result live in the database record as with the in-process
 * queue.
 */
export class BullmqQueue implements JobQueue {
  private readonly handlers = new Map<string, JobHandler<any>>();
  private readonly queue: Queue;
  private worker: Worker | null = null;
  private readonly connections: Redis[] = [];
  private readonly pending = new Set<number>();

  constructor(
    private readonly jobs: JobsRepository,
    private readonly log: FastifyBaseLogger,
    private readonly options: BullmqQueueOptions,
  ) {
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection(), prefix: options.prefix });
  }

  private connection(): Redis {
    const redis = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
    // ioredis retries forever while Redis is away; say so once per outage, not on every retry.
    let reported = false;
    redis.on('error', (err) => {
      if (!reported) this.log.warn({ err }, 'job queue redis error (retrying)');
      reported = true;
    });
    redis.on('ready', () => (reported = false));
    this.connections.push(redis);
    return redis;
  }

  register<P>(name: string, handler: JobHandler<P>): void {
    if (this.handlers.has(name)) throw new Error(`job "${name}" is registered twice`);
    this.handlers.set(name, handler as JobHandler<any>);
    if (this.options.work && !this.worker) {
      this.worker = new Worker(QUEUE_NAME, (job) => this.run(Number(job.data.jobId)), {
        connection: this.connection(),
        prefix: this.options.prefix,
        concurrency: this.options.concurrency ?? 1,
      });
      this.worker.on('error', (err) => this.log.error({ err }, 'job worker error'));
      // A job whose worker died is re-run once by BullMQ's stalled check; past that BullMQ fails it without running
      // the handler, so the record is closed here.
      this.worker.on('failed', (job, err) => {
        if (!job || !/stalled/i.test(err.message)) return;
        void this.jobs.finish(Number(job.data.jobId), { error: `its worker stopped: ${err.message}` }).catch(() => undefined);
      });
    }
  }

  async enqueue<P>(name: string, payload: P, options: EnqueueOptions = {}): Promise<JobRow> {
    if (!this.handlers.has(name)) throw new Error(`no handler registered for job "${name}"`);
    const job = await this.jobs.create(name, payload, options.projectId ?? null, options.createdBy ?? null);
    await this.submit(job);
    return job;
  }

  async submit(job: JobRow): Promise<void> {
    if (!this.handlers.has(job.name)) throw new Error(`no handler registered for job "${job.name}"`);
    this.pending.add(job.id);
    await this.queue.add(job.name, { jobId: job.id }, { removeOnComplete: true, removeOnFail: 1000 });
  }

  /** Waits until every job this process enqueued has finished, wherever it ran. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) {
      for (const id of [...this.pending]) {
        const row = await this.jobs.find(id);
        if (!row || FINISHED_STATUSES.includes(row.status)) this.pending.delete(id);
      }
      if (this.pending.size > 0) await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
  }

  async close(): Promise<void> {
    // BullMQ's close waits for Redis; with Redis gone it would wait forever, so force it then, and bound the wait.
    const connected = this.connections.every((redis) => redis.status === 'ready');
    const closing = Promise.allSettled([this.worker?.close(!connected), this.queue.close()]);
    await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
    for (const redis of this.connections) redis.disconnect();
  }

  private async run(jobId: number): Promise<void> {
    const row = await this.jobs.find(jobId);
    if (!row || row.status !== 'queued') return;
    const handler = this.handlers.get(row.name);
    if (!handler) {
      await this.jobs.finish(jobId, { error: `no handler for job "${row.name}" in this worker` });
      return;
    }
    await runJob(this.jobs, this.log, handler, row);
  }
}
