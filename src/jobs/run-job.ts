import type { FastifyBaseLogger } from 'fastify';
import type { JobHandler, JobRow } from './job-queue.js';
import type { JobsRepository } from './jobs.repository.js';

const PROGRESS_WRITE_MS = 500;

/** Runs one job's handler and records its life in the job record: running, throttled progress, result or error. */
export async function runJob(jobs: JobsRepository, log: FastifyBaseLogger, handler: JobHandler<any>, job: JobRow): Promise<void> {
  let lastWrite = 0;
  try {
    await jobs.markRunning(job.id);
    const result = await handler({
      jobId: job.id,
      payload: JSON.parse(job.payload),
      progress: async (fraction) => {
        const now = Date.now();
        if (now - lastWrite < PROGRESS_WRITE_MS) return;
        lastWrite = now;
        await jobs.setProgress(job.id, Math.max(0, Math.min(1, fraction)));
      },
    });
    await jobs.finish(job.id, { result });
  } catch (err) {
    log.error({ err, job: job.id, name: job.name }, 'job failed');
    await jobs.finish(job.id, { error: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
  }
}
