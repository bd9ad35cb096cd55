import type { FastifyInstance } from 'fastify';
import { AssignmentScope } from '../assignments/assignment-scope.js';
import { AssignmentsRepository } from '../assignments/assignments.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { LocksRepository } from './locks.repository.js';
import { locksRoutes } from './locks.routes.js';
import { LocksService } from './locks.service.js';

export function registerLocksModule(app: FastifyInstance, deps: ModuleDeps): void {
  locksRoutes(app, new LocksService(deps.db, new LocksRepository(deps.db), deps.access, new AssignmentScope(deps.access, new AssignmentsRepository(deps.db))));
}
