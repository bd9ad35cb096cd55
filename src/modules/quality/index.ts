import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { DetectorPredictions } from './model-predictions.js';
import { checkCatalog } from './catalog.js';
import { ImageFeaturesRepository } from './image-features.repository.js';
import { ProfilePartsRepository } from './profile-parts.repository.js';
import { ProfileRepository } from './profile.repository.js';
import { ProjectRevisionsRepository } from './project-revisions.repository.js';
import { ProfileService } from './profile.service.js';
import { QualityRepository } from './quality.repository.js';
import { canonicalRoutes, cleaningRoutes, qualityRoutes } from './quality.routes.js';
import { CanonicalRepository } from './canonical.repository.js';
import { CanonicalService } from './canonical.service.js';
import { CleaningRepository } from './cleaning.repository.js';
import { CleaningService } from './cleaning.service.js';
import { cleaningCatalog } from './cleaning-actions.js';
import { QualityService } from './quality.service.js';
import { ReadinessEvaluator } from './readiness.js';
import { CanonicalSamples } from './canonical-samples.js';
import { SampleDataRepository } from './sample-data.repository.js';
import { SampleProfiler } from './sample-profile.js';

export { ReadinessEvaluator, evaluateReadiness, READINESS_RULES, ADAPTER_TASKS, type ReadinessOut, type ReadinessConfig } from './readiness.js';
export { checkCatalog, checksOf, registerChecks } from './catalog.js';
export { ImageFeatureRecorder } from './image-features.service.js';
export { cleaningCatalog, cleaningActionsOf, registerCleaningActions } from './cleaning-actions.js';

/** What the quality module offers the others: the training gate's evaluator, the catalogs, and (for pipelines) the report and cleaning services. */
export interface QualityModule {
  readonly readiness: ReadinessEvaluator;
  readonly quality: QualityService;
  readonly cleaning: CleaningService;
  readonly checkCatalog: typeof checkCatalog;
  readonly cleaningCatalog: typeof cleaningCatalog;
}

/** How often every project's revision rows are folded (PostgreSQL; see ProjectRevisionsRepository.foldAll). */
const REVISION_FOLD_MS = 10 * 60_000;

/** The model-assisted checks run their detector on the shared model runtime and registry. */
export function registerQualityModule(app: FastifyInstance, deps: ModuleDeps): QualityModule {
  const models = deps.services.models;
  const profile = new ProfileRepository(deps.db);
  const features = new ImageFeaturesRepository(deps.db);
  const samples = new SampleDataRepository(deps.db);
  const predictions = new DetectorPredictions(models.repository, models.runtime, deps.blobs);
  const revisions = new ProjectRevisionsRepository(deps.db);
  const profiles = new ProfileService(profile, revisions, new SampleProfiler(samples), new ProfilePartsRepository(deps.db));
  const readiness = new ReadinessEvaluator(deps.access, profiles, samples);
  // PostgreSQL's revision rows of projects whose profile nobody opens are folded now and then.
  const folding = setInterval(() => void revisions.foldAll().catch((err) => app.log.warn({ err }, 'folding project revisions failed')), REVISION_FOLD_MS);
  folding.unref();
  app.addHook('onClose', async () => clearInterval(folding));
  const quality = new QualityService(deps.access, new QualityRepository(deps.db), features, deps.services.features, profiles, samples, predictions);
  qualityRoutes(app, { readiness, quality });
  const cleaning = new CleaningService(deps.access, new CleaningRepository(deps.db), quality, deps.services.revisions, deps.services.locks, deps.blobs);
  cleaningRoutes(app, cleaning);
  canonicalRoutes(app, new CanonicalService(deps.access, new CanonicalRepository(deps.scanDb), new CanonicalSamples(samples)));
  return { readiness, quality, cleaning, checkCatalog, cleaningCatalog };
}
