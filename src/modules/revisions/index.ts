import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AnnotationsRepository } from '../annotations/annotations.repository.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { ImageLookup } from '../../access/image-lookup.repository.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { RevisionsRepository } from './revisions.repository.js';
import { revisionsRoutes } from './revisions.routes.js';
import { RevisionsService } from './revisions.service.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface RevisionsServices {
  readonly revisions: RevisionsRepository;
  readonly annotationsRepository: AnnotationsRepository;
  readonly projectsRepository: ProjectsRepository;
  readonly locks: LockGuard;
  readonly scope: AssignmentScope;
  readonly images: ImageLookup;
}

export function registerRevisionsModule(app: FastifyInstance, deps: ModuleDeps<RevisionsServices>): void {
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
