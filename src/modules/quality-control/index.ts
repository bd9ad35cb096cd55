import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AnnotationsService } from '../annotations/annotations.service.js';
import type { Shape } from './shape-scores.logic.js';
import { QualityControlRepository } from './quality-control.repository.js';
import { qualityControlRoutes } from './quality-control.routes.js';
import { QualityControlService } from './quality-control.service.js';
import { SampleQualityRepository } from './sample-quality.repository.js';
import { sampleQualityRoutes } from './sample-quality.routes.js';
import { SampleQualityService } from './sample-quality.service.js';
import { taskReviewsRoutes } from './task-reviews.routes.js';
import { TaskReviewsService } from './task-reviews.service.js';

/** Labelling quality control (issue 29; a frame's ground truth holds the video's track shapes, `trackShapes`); returns the service (versions ask it which images ground truth keeps out). */
export function registerQualityControlModule(app: FastifyInstance, deps: ModuleDeps<{ readonly annotations: AnnotationsService }>, trackShapes: (imageId: number) => Promise<readonly Shape[]>): QualityControlService {
  const repo = new QualityControlRepository(deps.db);
  const service = new QualityControlService(repo, deps.access, deps.services.annotations, trackShapes);
  qualityControlRoutes(app, service);
  taskReviewsRoutes(app, new TaskReviewsService(repo, deps.access));
  sampleQualityRoutes(app, new SampleQualityService(new SampleQualityRepository(deps.db), deps.access, (projectId) => service.dealingSettings(projectId)));
  return service;
}
