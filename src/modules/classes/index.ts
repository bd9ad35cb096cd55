import type { FastifyInstance } from 'fastify';
import { LockGuard } from '../locks/lock-guard.js';
import { LocksRepository } from '../locks/locks.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { ProjectsRepository } from '../projects/projects.repository.js';
import { RevisionsRepository } from '../revisions/revisions.repository.js';
import { ClassesRepository } from './classes.repository.js';
import { classesRoutes } from './classes.routes.js';
import { ClassesService } from './classes.service.js';

export function registerClassesModule(app: FastifyInstance, deps: ModuleDeps): void {
  const service = new ClassesService(deps.db, new ClassesRepository(deps.db), new ProjectsRepository(deps.db), deps.access, {
    locks: new LockGuard(new LocksRepository(deps.db)),
    revisions: new RevisionsRepository(deps.db),
  });
  classesRoutes(app, service);
}
