import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { revisionsRoutes } from './revisions.routes.js';
import { RevisionsService } from './revisions.service.js';

export function registerRevisionsModule(app: FastifyInstance, deps: ModuleDeps): void {
  const { services } = deps;
  const service = new RevisionsService(
    deps.transactions,
    services.revisions,
    services.annotationsRepository,
    services.projectsRepository,
    deps.access,
    services.locks,
    services.scope,
    services.images,
  );
  revisionsRoutes(app, service);
}
