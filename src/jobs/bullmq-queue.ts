import { Queue, WaitingError, Worker, type Job } from 'bullmq';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { FINISHED_STATUSES, type EnqueueOptions, type JobHandler, type JobQueue, type JobRow } from './job-queue.js';
import { runJob, type JobRunner } from './run-job.js';

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
  /** How long a job stays held by a worker that stopped renewing its hold (it died) before another may take it. */
  lockMs?: number;
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
  private readonly releasing = new AbortController();
  private readonly runner: JobRunner;

  constructor(
    runner: Omit<JobRunner, 'release'>,
    private readonly options: BullmqQueueOptions,
  ) {
    this.runner = { ...runner, release: this.releasing.signal };
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection(), prefix: options.prefix });
  }

  private connection(): Redis {
    const redis = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
    // ioredis retries forever while Redis is away; say so once per outage, not on every retry.
    let reported = false;
    redis.on('error', (err) => {
      if (!reported) this.runner.log.warn({ err }, 'job queue redis error (retrying)');
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
      this.worker = new Worker(QUEUE_NAME, (job, token) => this.run(job, token), {
        connection: this.connection(),
        prefix: this.options.prefix,
        concurrency: this.options.concurrency ?? 1,
        // Which process runs a job (BullMQ's processedBy): host and pid, for operators and the several-processes test.
        name: `${hostname()}:${process.pid}`,
        ...(this.options.lockMs ? { lockDuration: this.options.lockMs, stalledInterval: this.options.lockMs } : {}),
      });
      this.worker.on('error', (err) => this.runner.log.error({ err }, 'job worker error'));
      // A job whose worker died is re-run once by BullMQ's stalled check; past that BullMQ fails it without running
      // the handler, so the record is closed here.
      this.worker.on('failed', (job, err) => {
        if (!job || !/stalled/i.test(err.message)) return;
        void this.runner.jobs.finish(Number(job.data.jobId), { error: `its worker stopped: ${err.message}` }).catch(() => undefined);
      });
    }
  }

  async enqueue<P>(name: string, payload: P, options: EnqueueOptions = {}): Promise<JobRow> {
    if (!this.handlers.has(name)) throw new Error(`no handler registered for job "${name}"`);
    const job = await this.runner.jobs.create(name, payload, options.projectId ?? null, options.createdBy ?? null);
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
        const row = await this.runner.jobs.find(id);
        if (!row || FINISHED_STATUSES.includes(row.status)) this.pending.delete(id);
      }
      if (this.pending.size > 0) await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
  }

  /**
   * The worker takes no more jobs and waits for its running ones (until `release` hands them back). BullMQ's close
   * waits for Redis; with Redis gone it would wait forever, so it is forced then, and the wait bounded.
   */
  async close(): Promise<void> {
    const connected = this.connections.every((redis) => redis.status === 'ready');
    const closing = Promise.allSettled([this.worker?.close(!connected), this.queue.close()]);
    if (connected) await closing;
    else await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
    for (const redis of this.connections) redis.disconnect();
  }

  release(): void {
    this.releasing.abort();
  }

  private async run(job: Job, token: string | undefined): Promise<void> {
    const jobId = Number(job.data.jobId);
    let row = await this.runner.jobs.find(jobId);
    // BullMQ hands a job over again only when the worker holding it stopped renewing its lock (it died mid-job): the
    // record still says running, and the job starts over here, as a released one would.
    if (row?.status === 'running' && job.stalledCounter > 0 && (await this.runner.jobs.requeueStalled(jobId))) row = await this.runner.jobs.find(jobId);
    if (!row || row.status !== 'queued') return;
    const handler = this.handlers.get(row.name);
    if (!handler) {
      await this.runner.jobs.finish(jobId, { error: `no handler for job "${row.name}" in this worker` });
      return;
    }
    if ((await runJob(this.runner, handler, row)) !== 'released') return;
    // Back to BullMQ's wait list at once (not left to the stalled check, which fails a job the second time round).
    await job.moveToWait(token);
    throw new WaitingError();
  }
}
