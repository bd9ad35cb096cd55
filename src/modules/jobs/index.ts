import type { FastifyInstance } from 'fastify';
import { JobsRepository } from '../../jobs/jobs.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { jobsRoutes } from './jobs.routes.js';
import { JobsService } from './jobs.service.js';

export function registerJobsModule(app: FastifyInstance, deps: ModuleDeps): void {
  jobsRoutes(app, new JobsService(new JobsRepository(deps.db), deps.access));
}
