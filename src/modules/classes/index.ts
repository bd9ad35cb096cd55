import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { ClassesRepository } from './classes.repository.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { RevisionsRepository } from '../revisions/revisions.repository.js';
import { classesRoutes } from './classes.routes.js';
import { ClassesService } from './classes.service.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface ClassesServices {
  readonly classesRepository: ClassesRepository;
  readonly projectsRepository: ProjectsRepository;
  readonly locks: LockGuard;
  readonly revisions: RevisionsRepository;
}

export function registerClassesModule(app: FastifyInstance, deps: ModuleDeps<ClassesServices>): void {
  const { services } = deps;
  const service = new ClassesService(deps.transactions, services.classesRepository, services.projectsRepository, deps.access, {
    locks: services.locks,
    revisions: services.revisions,
  });
  classesRoutes(app, service);
}
