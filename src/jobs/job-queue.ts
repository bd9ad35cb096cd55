import type { JobsTable } from '../db/schema.js';
import type { Selectable } from 'kysely';

export type JobRow = Selectable<JobsTable>;

export interface JobReport {
  /** In [0, 1]. */
  progress?: number;
  /** What the job is doing now, for people watching it. */
  message?: string | null;
  /** Seconds left, when the job can tell. */
  eta_seconds?: number | null;
}

export interface JobContext<P> {
  readonly jobId: number;
  readonly payload: P;
  /** Aborted when someone cancels the job (`POST /api/jobs/{id}/cancel`), in whichever process runs it. */
  readonly signal: AbortSignal;
  /** Records progress in [0, 1]; cheap to call often (writes are throttled). */
  progress(fraction: number): Promise<void>;
  /** Records progress, message and ETA together; throttled like `progress`, except that a new message is written at once. */
  report(report: JobReport): Promise<void>;
}

export type JobHandler<P = unknown> = (ctx: JobContext<P>) => Promise<unknown>;

export interface EnqueueOptions {
  projectId?: number | null;
  createdBy?: number | null;
}

/** Thrown by a handler that stopped because its signal was aborted; the job ends `cancelled`, not `failed`. */
export class JobCancelledError extends Error {
  constructor(message = 'cancelled') {
    super(message);
    this.name = 'JobCancelledError';
  }
}

/** The reason of a job's aborted signal when a shutdown released it: it runs again from the start, so its records should say queued. */
export class JobReleasedError extends Error {
  constructor() {
    super('released by a shutdown');
    this.name = 'JobReleasedError';
  }
}

/**
 * Named background jobs with typed payloads. Every job has a database record (status, progress, message, ETA,
 * result, error), so any process can report on it. Enqueuing a name without a registered handler is a programming
 * error. Cancelling is a flag in that record: the process running the job polls it and aborts the job's signal.
 */
export interface JobQueue {
  register<P>(name: string, handler: JobHandler<P>): void;
  enqueue<P>(name: string, payload: P, options?: EnqueueOptions): Promise<JobRow>;
  /**
   * Queues a record made earlier by `JobsRepository.create` and held back until its turn (a training run waiting for
   * a slot of its project); `enqueue` is create and submit at once. A record no longer queued is skipped when its turn comes.
   */
  submit(job: JobRow): Promise<void>;
  /** Resolves when every job enqueued so far has finished (tests and shutdown). */
  drain(): Promise<void>;
  /** Takes no more jobs and resolves once this process runs none (the running ones finish, or `release` stops them). */
  close(): Promise<void>;
  /**
   * The shutdown's deadline passed: the jobs this process runs are stopped (their signal aborted) and handed back to
   * the queue, `queued` again and not failed, to run from the start in the next process that takes them.
   */
  release(): void;
}

export const FINISHED_STATUSES: readonly JobRow['status'][] = ['succeeded', 'failed', 'cancelled'];
