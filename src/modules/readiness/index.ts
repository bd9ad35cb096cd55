import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { DatasetProfiler } from '../profile/dataset-profile.service.js';
import type { SampleDataRepository } from '../profile/sample-data.repository.js';
import { readinessRoutes } from './readiness.routes.js';
import { ReadinessEvaluator } from './readiness.service.js';

/** Training readiness on the profile module's statistics: its route, and the evaluator the training gate is handed. */
export function registerReadinessModule(app: FastifyInstance, deps: ModuleDeps, profiler: DatasetProfiler, samples: SampleDataRepository): ReadinessEvaluator {
  const readiness = new ReadinessEvaluator(deps.access, profiler, samples);
  readinessRoutes(app, readiness);
  return readiness;
}
