import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { ExportsRepository } from './exports.repository.js';
import { exportsRoutes } from './exports.routes.js';
import { ExportsService } from './exports.service.js';

/** What the module offers others: the export service, and its repository for modules that record export files of their own (samples' training layouts). */
export interface ExportsModule {
  readonly service: ExportsService;
  readonly repository: ExportsRepository;
}

export function registerExportsModule(app: FastifyInstance, deps: ModuleDeps): ExportsModule {
  const repository = new ExportsRepository(deps.db);
  const service = new ExportsService(repository, deps.access, deps.blobs, deps.metrics);
  exportsRoutes(app, service);
  return { service, repository };
}
