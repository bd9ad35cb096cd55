import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AnnotationsRepository } from '../annotations/annotations.repository.js';
import type { AnnotationsService } from '../annotations/annotations.service.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { ClassesRepository } from '../classes/classes.repository.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { RevisionsRepository } from '../revisions/revisions.repository.js';
import { AutoAnnotateRepository } from './auto-annotate.repository.js';
import { autoAnnotateRoutes } from './auto-annotate.routes.js';
import { AutoAnnotateService, SAM_PRECOMPUTE_JOB, YOLO_JOB } from './auto-annotate.service.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface AutoAnnotateServices {
  readonly annotations: AnnotationsService;
  readonly annotationsRepository: AnnotationsRepository;
  readonly classesRepository: ClassesRepository;
  readonly projectsRepository: ProjectsRepository;
  readonly models: { readonly runtime: ModelRuntime; readonly repository: ModelsRepository };
  readonly locks: LockGuard;
  readonly revisions: RevisionsRepository;
  readonly scope: AssignmentScope;
}

/** Detector and SAM assistance on top of the model registry's runtime; registers its background jobs; returns the service (pipelines run detectors through it). */
export function registerAutoAnnotateModule(app: FastifyInstance, deps: ModuleDeps<AutoAnnotateServices>): AutoAnnotateService {
  const { services } = deps;
  const repository = new AutoAnnotateRepository(deps.db, services.annotationsRepository, services.classesRepository, services.projectsRepository);
  const service = new AutoAnnotateService(repository, services.models.repository, services.models.runtime, deps.access, deps.blobs, deps.queue, services.annotations, {
    locks: services.locks,
    revisions: services.revisions,
    scope: services.scope,
  });
  deps.queue.register(YOLO_JOB, (ctx) => service.runYoloJob(ctx as Parameters<AutoAnnotateService['runYoloJob']>[0]));
  deps.queue.register(SAM_PRECOMPUTE_JOB, (ctx) => service.runPrecomputeJob(ctx as Parameters<AutoAnnotateService['runPrecomputeJob']>[0]));
  autoAnnotateRoutes(app, service);
  return service;
}
