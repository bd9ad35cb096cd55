import { setTimeout as sleep } from 'node:timers/promises';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import { FINISHED_STATUSES, type JobRow } from '../../jobs/job-queue.js';
import type { JobsRepository } from '../../jobs/jobs.repository.js';
import { toJobOut, type JobOut } from './jobs.schemas.js';

/** How long a cancel request waits for a running job's process to stop it before answering with its current state. */
const CANCEL_WAIT_MS = 15_000;

export class JobsService {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly access: ProjectAccess,
  ) {}

  /** A job is visible to whoever may read its project, or to its creator when it belongs to no project. */
  async get(caller: Caller, id: number): Promise<JobOut> {
    return toJobOut(await this.visible(caller, id, 'project.read'));
  }

  /**
   * Stops a queued or running job. A queued job is cancelled at once; a running one is flagged, the process running
   * it aborts the job's signal (the handler removes its partial output) and the answer waits a little for that.
   * Cancelling needs write access to the job's project (or to be its creator); a finished job is 409.
   */
  async cancel(caller: Caller, id: number): Promise<JobOut> {
    const job = await this.visible(caller, id, 'project.read');
    if (job.project_id !== null) await this.access.project(caller, job.project_id, 'versions.write');
    if (FINISHED_STATUSES.includes(job.status)) throw new ConflictError(`Job ${id} has already ${job.status === 'cancelled' ? 'been cancelled' : job.status}`);
    let row = (await this.jobs.requestCancel(id))!;
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (!FINISHED_STATUSES.includes(row.status) && Date.now() < deadline) {
      await sleep(100);
      row = (await this.jobs.find(id))!;
    }
    return toJobOut(row);
  }

  private async visible(caller: Caller, id: number, permission: 'project.read'): Promise<JobRow> {
    const job = await this.jobs.find(id);
    const notFound = `Job ${id} not found`;
    if (!job) throw new NotFoundError(notFound);
    if (job.project_id !== null) {
      await this.access.project(caller, job.project_id, permission).catch(() => {
        throw new NotFoundError(notFound);
      });
    } else if (job.created_by !== caller.userId && !caller.isAdmin) {
      throw new NotFoundError(notFound);
    }
    return job;
  }
}
