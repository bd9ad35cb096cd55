import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { checkCatalog } from './catalog.js';
import { ImageFeaturesRepository } from './image-features.repository.js';
import { ImageFeatureRecorder } from './image-features.service.js';
import { ProfileRepository } from './profile.repository.js';
import { ProfileService } from './profile.service.js';
import { QualityRepository } from './quality.repository.js';
import { qualityRoutes } from './quality.routes.js';
import { QualityService } from './quality.service.js';
import { ReadinessEvaluator } from './readiness.js';

export { ReadinessEvaluator, evaluateReadiness, READINESS_RULES, ADAPTER_TASKS, type ReadinessOut, type ReadinessConfig } from './readiness.js';
export { checkCatalog, checksOf, registerChecks } from './catalog.js';
export { ImageFeatureRecorder } from './image-features.service.js';

/** What the quality module offers the others: the training gate's evaluator and the catalogs. */
export interface QualityModule {
  readonly readiness: ReadinessEvaluator;
  readonly checkCatalog: typeof checkCatalog;
}

export function registerQualityModule(app: FastifyInstance, deps: ModuleDeps): QualityModule {
  const profile = new ProfileRepository(deps.db);
  const features = new ImageFeaturesRepository(deps.db);
  const recorder = new ImageFeatureRecorder(features, deps.blobs);
  const readiness = new ReadinessEvaluator(deps.access, profile);
  const quality = new QualityService(deps.access, new QualityRepository(deps.db), features, recorder, new ProfileService(profile));
  qualityRoutes(app, { readiness, quality });
  return { readiness, checkCatalog };
}
