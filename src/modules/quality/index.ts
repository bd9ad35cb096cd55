import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { ProfileRepository } from './profile.repository.js';
import { qualityRoutes } from './quality.routes.js';
import { ReadinessEvaluator } from './readiness.js';

export { ReadinessEvaluator, evaluateReadiness, READINESS_RULES, ADAPTER_TASKS, type ReadinessOut, type ReadinessConfig } from './readiness.js';

/** What the quality module offers the others: the training gate's evaluator and the two catalogs. */
export interface QualityModule {
  readonly readiness: ReadinessEvaluator;
}

export function registerQualityModule(app: FastifyInstance, deps: ModuleDeps): QualityModule {
  const profile = new ProfileRepository(deps.db);
  const readiness = new ReadinessEvaluator(deps.access, profile);
  qualityRoutes(app, { readiness });
  return { readiness };
}
