import type { EnqueueOptions, JobHandler, JobQueue, JobRow } from './job-queue.js';
import { runJob, type JobRunner } from './run-job.js';

/**
 * Runs jobs in this process, `concurrency` at a time, in enqueue order. The queue itself is memory: what a shutdown
 * stops or leaves waiting is marked released in its record, and `resume` queues those again at the next start.
 */
export class InProcessQueue implements JobQueue {
  private readonly handlers = new Map<string, JobHandler<any>>();
  private readonly waiting: JobRow[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private running = 0;
  private closed = false;
  private readonly releasing = new AbortController();
  private readonly runner: JobRunner;

  constructor(
    runner: Omit<JobRunner, 'release'>,
    private readonly concurrency = 1,
  ) {
    this.runner = { ...runner, release: this.releasing.signal };
  }

  register<P>(name: string, handler: JobHandler<P>): void {
    if (this.handlers.has(name)) throw new Error(`job "${name}" is registered twice`);
    this.handlers.set(name, handler as JobHandler<any>);
  }

  async enqueue<P>(name: string, payload: P, options: EnqueueOptions = {}): Promise<JobRow> {
    this.check(name);
    const job = await this.runner.jobs.create(name, payload, options.projectId ?? null, options.createdBy ?? null);
    await this.submit(job);
    return job;
  }

  async submit(job: JobRow): Promise<void> {
    this.check(job.name);
    this.waiting.push(job);
    setImmediate(() => this.pump());
  }

  /** Queues again the jobs a shutdown released (call once every handler is registered). */
  async resume(): Promise<void> {
    for (const job of await this.runner.jobs.released()) {
      if (this.handlers.has(job.name)) await this.submit(job);
      else await this.runner.jobs.finish(job.id, { error: `no handler for job "${job.name}" any more` });
    }
  }

  private check(name: string): void {
    if (!this.handlers.has(name)) throw new Error(`no handler registered for job "${name}"`);
    if (this.closed) throw new Error('the job queue is closed');
  }

  drain(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Takes no more jobs: those waiting are released at once, the running ones finish (or are released by `release`). */
  async close(): Promise<void> {
    this.closed = true;
    const left = this.waiting.splice(0);
    for (const job of left) await this.runner.jobs.release(job.id);
    await this.drain();
  }

  release(): void {
    this.releasing.abort();
  }

  private pump(): void {
    while (!this.closed && this.running < this.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      void runJob(this.runner, this.handlers.get(job.name)!, job).finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0 && this.waiting.length === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
      });
    }
  }
}
