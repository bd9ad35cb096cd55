import type { FastifyBaseLogger } from 'fastify';
import type { JobHandler, JobReport, JobRow } from './job-queue.js';
import type { JobsRepository } from './jobs.repository.js';

const PROGRESS_WRITE_MS = 500;
/** How often the running process looks for a cancel request in the job record (any process may have made it). */
export const CANCEL_POLL_MS = 500;

/**
 * Runs one job's handler and records its life in the job record: running, throttled progress/message/ETA, result or
 * error. A cancel request (a flag in the record, so it works across processes) aborts the handler's signal; the job
 * then ends `cancelled` however the handler ends.
 */
export async function runJob(jobs: JobsRepository, log: FastifyBaseLogger, handler: JobHandler<any>, job: JobRow): Promise<void> {
  let lastWrite = 0;
  let lastMessage: string | null | undefined;
  const controller = new AbortController();
  if (!(await jobs.markRunning(job.id))) return;
  const poll = setInterval(() => {
    jobs.cancelRequested(job.id).then((asked) => {
      if (asked && !controller.signal.aborted) controller.abort(new Error('cancelled'));
    }, () => undefined);
  }, CANCEL_POLL_MS);
  poll.unref();
  const report = async (update: JobReport) => {
    const now = Date.now();
    const newMessage = update.message !== undefined && update.message !== lastMessage;
    if (!newMessage && now - lastWrite < PROGRESS_WRITE_MS) return;
    lastWrite = now;
    if (update.message !== undefined) lastMessage = update.message;
    await jobs.report(job.id, update);
  };
  try {
    const result = await handler({
      jobId: job.id,
      payload: JSON.parse(job.payload),
      signal: controller.signal,
      progress: (fraction) => report({ progress: fraction }),
      report,
    });
    clearInterval(poll);
    if (controller.signal.aborted || (await jobs.cancelRequested(job.id))) await jobs.finish(job.id, { cancelled: true });
    else await jobs.finish(job.id, { result });
  } catch (err) {
    clearInterval(poll);
    if (controller.signal.aborted) {
      await jobs.finish(job.id, { cancelled: true }).catch(() => undefined);
      return;
    }
    log.error({ err, job: job.id, name: job.name }, 'job failed');
    await jobs.finish(job.id, { error: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
  }
}
