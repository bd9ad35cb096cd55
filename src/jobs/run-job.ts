import type { FastifyBaseLogger } from 'fastify';
import type { JobOutcome, Metrics } from '../lib/metrics.js';
import { JobReleasedError, type JobHandler, type JobReport, type JobRow } from './job-queue.js';
import type { JobsRepository } from './jobs.repository.js';

/** What every run of a queue shares: the records, the log, the metrics, and the queue's shutdown signal. */
export interface JobRunner {
  readonly jobs: JobsRepository;
  readonly log: FastifyBaseLogger;
  readonly metrics: Metrics;
  /** Aborted when the process shuts down past its deadline: running jobs are handed back to the queue. */
  readonly release: AbortSignal;
}

const PROGRESS_WRITE_MS = 500;
/** How often the running process looks for a cancel request in the job record (any process may have made it). */
export const CANCEL_POLL_MS = 500;

/**
 * Runs one job's handler and records its life in the job record: running, throttled progress/message/ETA, result or
 * error. A cancel request (a flag in the record, so it works across processes) aborts the handler's signal; the job
 * then ends `cancelled` however the handler ends. The runner's `release` signal aborts it too, but the job then goes
 * back to `queued` (released, to run again from the start), not cancelled or failed. Returns how the run ended, or
 * null when the job was no longer queued.
 */
export async function runJob(runner: JobRunner, handler: JobHandler<any>, job: JobRow): Promise<JobOutcome | null> {
  if (!(await runner.jobs.markRunning(job.id))) return null;
  const started = performance.now();
  const outcome = await follow(runner, handler, job);
  runner.metrics.job(job.name, outcome, (performance.now() - started) / 1000);
  return outcome;
}

/**
 * The handler's progress reports, written to the job record at most every PROGRESS_WRITE_MS unless the message changes;
 * nothing once the record is released (it is the queue's again: a handler still running must not write over it).
 */
function throttledReport(jobs: JobRunner['jobs'], jobId: number, isReleased: () => boolean): (update: JobReport) => Promise<void> {
  let lastWrite = 0;
  let lastMessage: string | null | undefined;
  return async (update) => {
    if (isReleased()) return;
    const now = Date.now();
    const newMessage = update.message !== undefined && update.message !== lastMessage;
    if (!newMessage && now - lastWrite < PROGRESS_WRITE_MS) return;
    lastWrite = now;
    if (update.message !== undefined) lastMessage = update.message;
    await jobs.report(jobId, update);
  };
}

/** Aborts the handler's signal once someone asks to cancel the job (the record is looked at every CANCEL_POLL_MS). */
function pollCancel(jobs: JobRunner['jobs'], jobId: number, controller: AbortController): NodeJS.Timeout {
  const poll = setInterval(() => {
    jobs.cancelRequested(jobId).then((asked) => {
      if (asked && !controller.signal.aborted) controller.abort(new Error('cancelled'));
    }, () => undefined);
  }, CANCEL_POLL_MS);
  poll.unref();
  return poll;
}

async function follow({ jobs, log, release }: JobRunner, handler: JobHandler<any>, job: JobRow): Promise<JobOutcome> {
  const controller = new AbortController();
  // The record goes back to the queue at once, so that a handler deaf to its signal cannot hold it past the exit.
  let releasing: Promise<void> | null = null;
  const stop = () => {
    releasing = jobs.release(job.id).catch((err) => log.error({ err, job: job.id }, 'could not release the job'));
    controller.abort(new JobReleasedError());
  };
  if (release.aborted) stop();
  release.addEventListener('abort', stop);
  const poll = pollCancel(jobs, job.id, controller);
  const report = throttledReport(jobs, job.id, () => releasing !== null);
  /** A job the shutdown stopped (and nobody cancelled meanwhile) stays released, however its handler ended. */
  const released = async () => {
    if (!releasing) return false;
    await releasing;
    return !(await jobs.cancelRequested(job.id).catch(() => false));
  };
  try {
    const result = await handler({
      jobId: job.id,
      payload: JSON.parse(job.payload),
      signal: controller.signal,
      progress: (fraction) => report({ progress: fraction }),
      report,
    });
    if (await released()) return 'released';
    if (controller.signal.aborted || (await jobs.cancelRequested(job.id))) {
      await jobs.finish(job.id, { cancelled: true });
      return 'cancelled';
    }
    await jobs.finish(job.id, { result });
    return 'succeeded';
  } catch (err) {
    if (await released()) return 'released';
    if (controller.signal.aborted) {
      await jobs.finish(job.id, { cancelled: true }).catch(() => undefined);
      return 'cancelled';
    }
    log.error({ err, job: job.id, name: job.name }, 'job failed');
    await jobs.finish(job.id, { error: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
    return 'failed';
  } finally {
    clearInterval(poll);
    release.removeEventListener('abort', stop);
  }
}
