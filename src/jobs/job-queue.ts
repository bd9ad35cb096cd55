import type { JobsTable } from '../db/schema.js';
import type { Selectable } from 'kysely';

export type JobRow = Selectable<JobsTable>;

export interface JobContext<P> {
  readonly jobId: number;
  readonly payload: P;
  /** Records progress in [0, 1]; cheap to call often (writes are throttled). */
  progress(fraction: number): Promise<void>;
}

export type JobHandler<P = unknown> = (ctx: JobContext<P>) => Promise<unknown>;

export interface EnqueueOptions {
  projectId?: number | null;
  createdBy?: number | null;
}

/**
 * Named background jobs with typed payloads. Every job has a database record (status, progress, result, error), so
 * any process can report on it. Enqueuing a name without a registered handler is a programming error.
 */
export interface JobQueue {
  register<P>(name: string, handler: JobHandler<P>): void;
  enqueue<P>(name: string, payload: P, options?: EnqueueOptions): Promise<JobRow>;
  /** Resolves when every job enqueued so far has finished (tests and shutdown). */
  drain(): Promise<void>;
  close(): Promise<void>;
}
