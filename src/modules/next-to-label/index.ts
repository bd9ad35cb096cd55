import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import { NextToLabelRepository } from './next-to-label.repository.js';
import { nextToLabelRoutes } from './next-to-label.routes.js';
import { NextToLabelService } from './next-to-label.service.js';
import { PredictionCache } from './prediction-cache.logic.js';

/** Predictions kept in memory: an entry is an embedding of 10 × classes floats (0.5 kB for 13 classes, 3 kB for COCO's 80) and 14 bytes a detection. */
const CACHED_PREDICTIONS = 50_000;

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface NextToLabelServices {
  readonly models: { readonly runtime: ModelRuntime; readonly repository: ModelsRepository };
  readonly scope: AssignmentScope;
}

/** Active learning: which unlabelled images to label next, ranked with the model registry's runtime. */
export function registerNextToLabelModule(app: FastifyInstance, deps: ModuleDeps<NextToLabelServices>): void {
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
