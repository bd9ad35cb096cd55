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
import { imageTaskReviews, TaskReviewsService } from './task-reviews.service.js';
import { PendingTaskReviewOut, TaskReviewCreate, TaskReviewOut, TaskReviewQuery } from './quality-control.schemas.js';
import { PendingSampleTaskReviewOut, SampleTaskReviewCreate, SampleTaskReviewOut, SampleTaskReviewQuery } from './sample-quality.schemas.js';
import { sampleTaskReviews } from './sample-quality.service.js';

/** Labelling quality control (issue 29; a frame's ground truth holds the video's track shapes, `trackShapes`); returns the service (versions ask it which images ground truth keeps out). */
export function registerQualityControlModule(app: FastifyInstance, deps: ModuleDeps<{ readonly annotations: AnnotationsService }>, trackShapes: (imageId: number) => Promise<readonly Shape[]>): QualityControlService {
  const repo = new QualityControlRepository(deps.db);
  const service = new QualityControlService(repo, deps.access, deps.services.annotations, trackShapes);
  qualityControlRoutes(app, service);
  taskReviewsRoutes(app, '/api/projects/:id/quality-control/task-reviews', 'image', new TaskReviewsService(imageTaskReviews(repo), deps.access), { pending: PendingTaskReviewOut, create: TaskReviewCreate, review: TaskReviewOut, query: TaskReviewQuery });
  const samples = new SampleQualityRepository(deps.db);
  sampleQualityRoutes(app, new SampleQualityService(samples, deps.access, (projectId) => service.dealingSettings(projectId)));
  taskReviewsRoutes(app, '/api/projects/:id/quality-control/samples/task-reviews', 'sample', new TaskReviewsService(sampleTaskReviews(samples), deps.access), { pending: PendingSampleTaskReviewOut, create: SampleTaskReviewCreate, review: SampleTaskReviewOut, query: SampleTaskReviewQuery });
  return service;
}
