import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { classesRoutes } from './classes.routes.js';
import { ClassesService } from './classes.service.js';

export function registerClassesModule(app: FastifyInstance, deps: ModuleDeps): void {
  const { services } = deps;
  const service = new ClassesService(deps.transactions, services.classesRepository, services.projectsRepository, deps.access, {
    locks: services.locks,
    revisions: services.revisions,
  });
  classesRoutes(app, service);
}
