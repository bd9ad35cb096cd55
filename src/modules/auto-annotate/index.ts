import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { AutoAnnotateRepository } from './auto-annotate.repository.js';
import { autoAnnotateRoutes } from './auto-annotate.routes.js';
import { AutoAnnotateService, SAM_PRECOMPUTE_JOB, YOLO_JOB } from './auto-annotate.service.js';

/** Detector and SAM assistance on top of the model registry's runtime; registers its background jobs; returns the service (pipelines run detectors through it). */
export function registerAutoAnnotateModule(app: FastifyInstance, deps: ModuleDeps): AutoAnnotateService {
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
