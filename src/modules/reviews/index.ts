import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import { ReviewsRepository } from './reviews.repository.js';
import { reviewsRoutes } from './reviews.routes.js';
import { ReviewsService } from './reviews.service.js';

/** Review routes; returns the service (pipelines put images in the review queue through it). */
export function registerReviewsModule(app: FastifyInstance, deps: ModuleDeps<{ readonly scope: AssignmentScope }>): ReviewsService {
  const service = new ReviewsService(new ReviewsRepository(deps.db), deps.access, deps.services.scope);
  reviewsRoutes(app, service);
  return service;
}
