import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { ProjectsService } from './projects.service.js';
import { projectsRoutes } from './projects.routes.js';

/** Projects: the service is shared (platform statistics read it), so it comes built from the composition root. */
export function registerProjectsModule(app: FastifyInstance, deps: ModuleDeps<{ readonly projects: ProjectsService }>): void {
  projectsRoutes(app, deps.services.projects);
}
