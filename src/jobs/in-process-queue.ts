import type { FastifyBaseLogger } from 'fastify';
import type { EnqueueOptions, JobHandler, JobQueue, JobRow } from './job-queue.js';
import { JobsRepository } from './jobs.repository.js';
import { runJob } from './run-job.js';

/** Runs jobs in this process, `concurrency` at a time, in enqueue order. */
export class InProcessQueue implements JobQueue {
  private readonly handlers = new Map<string, JobHandler<any>>();
  private readonly waiting: JobRow[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private running = 0;
  private closed = false;

  constructor(
    private readonly jobs: JobsRepository,
    private readonly log: FastifyBaseLogger,
    private readonly concurrency = 1,
  ) {}

  register<P>(name: string, handler: JobHandler<P>): void {
    if (this.handlers.has(name)) throw new Error(`job "${name}" is registered twice`);
    this.handlers.set(name, handler as JobHandler<any>);
  }

  async enqueue<P>(name: string, payload: P, options: EnqueueOptions = {}): Promise<JobRow> {
    this.check(name);
    const job = await this.jobs.create(name, payload, options.projectId ?? null, options.createdBy ?? null);
    await this.submit(job);
    return job;
  }

  async submit(job: JobRow): Promise<void> {
    this.check(job.name);
    this.waiting.push(job);
    setImmediate(() => this.pump());
  }

  private check(name: string): void {
    if (!this.handlers.has(name)) throw new Error(`no handler registered for job "${name}"`);
    if (this.closed) throw new Error('the job queue is closed');
  }

  drain(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiting.length = 0;
    await this.drain();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      void this.run(job).finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0 && this.waiting.length === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
      });
    }
  }

  private run(job: JobRow): Promise<void> {
    return runJob(this.jobs, this.log, this.handlers.get(job.name)!, job);
  }
}
