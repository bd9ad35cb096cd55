import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AnyItemWorkflow } from '../workflow/item-workflow.service.js';
import { AssignmentsRepository } from './assignments.repository.js';
import { assignmentsRoutes } from './assignments.routes.js';
import { AssignmentsService } from './assignments.service.js';

export function registerAssignmentsModule(app: FastifyInstance, deps: ModuleDeps<{ readonly workflow: { readonly images: AnyItemWorkflow } }>): void {
  assignmentsRoutes(app, new AssignmentsService(new AssignmentsRepository(deps.db), deps.access, deps.services.workflow.images));
}
