import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { NotFoundError } from '../../http/errors.js';
import type { JobsRepository } from '../../jobs/jobs.repository.js';
import { toJobOut, type JobOut } from './jobs.schemas.js';

export class JobsService {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly access: ProjectAccess,
  ) {}

  /** A job is visible to whoever may read its project, or to its creator when it belongs to no project. */
  async get(caller: Caller, id: number): Promise<JobOut> {
    const job = await this.jobs.find(id);
    const notFound = `Job ${id} not found`;
    if (!job) throw new NotFoundError(notFound);
    if (job.project_id !== null) {
      await this.access.project(caller, job.project_id, 'project.read').catch(() => {
        throw new NotFoundError(notFound);
      });
    } else if (job.created_by !== caller.userId && !caller.isAdmin) {
      throw new NotFoundError(notFound);
    }
    return toJobOut(job);
  }
}
