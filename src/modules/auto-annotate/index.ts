import type { FastifyInstance } from 'fastify';
import { AnnotationsRepository } from '../annotations/annotations.repository.js';
import { createAnnotationsService } from '../annotations/index.js';
import { AssignmentScope } from '../assignments/assignment-scope.js';
import { AssignmentsRepository } from '../assignments/assignments.repository.js';
import { ClassesRepository } from '../classes/classes.repository.js';
import { LockGuard } from '../locks/lock-guard.js';
import { LocksRepository } from '../locks/locks.repository.js';
import type { ModelsModule } from '../models/index.js';
import type { ModuleDeps } from '../module-deps.js';
import { ProjectsRepository } from '../projects/projects.repository.js';
import { RevisionsRepository } from '../revisions/revisions.repository.js';
import { AutoAnnotateRepository } from './auto-annotate.repository.js';
import { autoAnnotateRoutes } from './auto-annotate.routes.js';
import { AutoAnnotateService, SAM_PRECOMPUTE_JOB, YOLO_JOB } from './auto-annotate.service.js';

/** Detector and SAM assistance on top of the model registry's runtime; registers its background jobs; returns the service (pipelines run detectors through it). */
export function registerAutoAnnotateModule(app: FastifyInstance, deps: ModuleDeps, models: ModelsModule): AutoAnnotateService {
  const annotationsRepository = new AnnotationsRepository(deps.db);
  const repository = new AutoAnnotateRepository(deps.db, annotationsRepository, new ClassesRepository(deps.db), new ProjectsRepository(deps.db));
  const annotations = createAnnotationsService(deps, annotationsRepository);
  const service = new AutoAnnotateService(repository, models.repository, models.runtime, deps.access, deps.blobs, deps.queue, annotations, {
    locks: new LockGuard(new LocksRepository(deps.db)),
    revisions: new RevisionsRepository(deps.db),
    scope: new AssignmentScope(deps.access, new AssignmentsRepository(deps.db)),
  });
  deps.queue.register(YOLO_JOB, (ctx) => service.runYoloJob(ctx as Parameters<AutoAnnotateService['runYoloJob']>[0]));
  deps.queue.register(SAM_PRECOMPUTE_JOB, (ctx) => service.runPrecomputeJob(ctx as Parameters<AutoAnnotateService['runPrecomputeJob']>[0]));
  autoAnnotateRoutes(app, service);
  return service;
}
