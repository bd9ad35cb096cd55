import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { ReviewsRepository } from './reviews.repository.js';
import { reviewsRoutes } from './reviews.routes.js';
import { ReviewsService } from './reviews.service.js';

export function registerReviewsModule(app: FastifyInstance, deps: ModuleDeps): void {
  reviewsRoutes(app, new ReviewsService(new ReviewsRepository(deps.db), deps.access, deps.services.scope));
}
