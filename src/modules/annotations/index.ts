import type { FastifyInstance } from 'fastify';
import { WriteBatcher } from '../../db/write-batcher.js';
import { AssignmentScope } from '../assignments/assignment-scope.js';
import { AssignmentsRepository } from '../assignments/assignments.repository.js';
import { LockGuard } from '../locks/lock-guard.js';
import { LocksRepository } from '../locks/locks.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { RevisionsRepository } from '../revisions/revisions.repository.js';
import { AnnotationsRepository } from './annotations.repository.js';
import { annotationsRoutes } from './annotations.routes.js';
import { AnnotationsService } from './annotations.service.js';

/** The annotation service with what every annotation write needs: group commit, lock checks, revisions, assignments. */
export function createAnnotationsService(deps: ModuleDeps, repository = new AnnotationsRepository(deps.db)): AnnotationsService {
  return new AnnotationsService(
    new WriteBatcher(deps.db),
    repository,
    deps.access,
    new LockGuard(new LocksRepository(deps.db)),
    new RevisionsRepository(deps.db),
    new AssignmentScope(deps.access, new AssignmentsRepository(deps.db)),
  );
}

export function registerAnnotationsModule(app: FastifyInstance, deps: ModuleDeps): void {
  annotationsRoutes(app, createAnnotationsService(deps));
}
