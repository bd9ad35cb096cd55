import type { FastifyInstance } from 'fastify';
import { AnnotationsRepository } from '../annotations/annotations.repository.js';
import { AssignmentScope } from '../assignments/assignment-scope.js';
import { AssignmentsRepository } from '../assignments/assignments.repository.js';
import { LockGuard } from '../locks/lock-guard.js';
import { LocksRepository } from '../locks/locks.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { ProjectsRepository } from '../projects/projects.repository.js';
import { RevisionsRepository } from './revisions.repository.js';
import { revisionsRoutes } from './revisions.routes.js';
import { RevisionsService } from './revisions.service.js';

export function registerRevisionsModule(app: FastifyInstance, deps: ModuleDeps): void {
  const service = new RevisionsService(
    deps.db,
    new RevisionsRepository(deps.db),
    new AnnotationsRepository(deps.db),
    new ProjectsRepository(deps.db),
    deps.access,
    new LockGuard(new LocksRepository(deps.db)),
    new AssignmentScope(deps.access, new AssignmentsRepository(deps.db)),
  );
  revisionsRoutes(app, service);
}
