import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { NextToLabelRepository } from './next-to-label.repository.js';
import { nextToLabelRoutes } from './next-to-label.routes.js';
import { NextToLabelService } from './next-to-label.service.js';
import { PredictionCache } from './prediction-cache.logic.js';

/** Predictions kept in memory: an entry is an embedding of 10 × classes floats (0.5 kB for 13 classes, 3 kB for COCO's 80). */
const CACHED_PREDICTIONS = 50_000;

/** Active learning: which unlabelled images to label next, ranked with the model registry's runtime. */
export function registerNextToLabelModule(app: FastifyInstance, deps: ModuleDeps): void {
  const { services } = deps;
  const service = new NextToLabelService(
    new NextToLabelRepository(deps.db),
    services.models.repository,
    services.models.runtime,
    deps.blobs,
    deps.access,
    services.scope,
    new PredictionCache(CACHED_PREDICTIONS),
  );
  nextToLabelRoutes(app, service);
}
