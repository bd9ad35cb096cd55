import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { ImageFeatureRecorder } from './image-features.service.js';
import type { ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import type { SampleDataRepository } from '../profile/sample-data.repository.js';
import { checkCatalog } from './catalog.logic.js';
import { ImageFeaturesRepository } from './image-features.repository.js';
import { DetectorPredictions } from './model-predictions.adapter.js';
import { QualityRepository } from './quality.repository.js';
import { qualityRoutes } from './quality.routes.js';
import { QualityService } from './quality.service.js';

/** What the quality module offers the others: the report service (pipelines, cleaning's snapshot) and the check catalog. */
export interface QualityModule {
  readonly quality: QualityService;
  readonly checkCatalog: typeof checkCatalog;
}

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface QualityServices {
  readonly models: { readonly runtime: ModelRuntime; readonly repository: ModelsRepository };
  readonly features: ImageFeatureRecorder;
}

/** The model-assisted checks run their detector on the shared model runtime and registry; samples are read through the profile module's repository. */
export function registerQualityModule(app: FastifyInstance, deps: ModuleDeps<QualityServices>, samples: SampleDataRepository): QualityModule {
  const models = deps.services.models;
  const features = new ImageFeaturesRepository(deps.db);
  const predictions = new DetectorPredictions(models.repository, models.runtime, deps.blobs);
  const quality = new QualityService(deps.access, new QualityRepository(deps.db), features, deps.services.features, samples, predictions);
  qualityRoutes(app, quality);
  return { quality, checkCatalog };
}
