import type { Caller } from '../access/caller.js';
// The report's shape is defined once, beside the route that answers it.
import type { ReadinessOut } from '../modules/readiness/readiness.schemas.js';

export interface ReadinessOptions {
  adapter?: string;
  config?: { min_readiness_score?: number };
}

/**
 * Decides whether a project's data is ready to train on. Training depends on this interface only; the readiness
 * module provides the evaluator (src/modules/readiness/readiness.service.ts), handed over in app.ts.
 */
export interface ReadinessEvaluator {
  evaluate(caller: Caller, projectId: number, options: ReadinessOptions): Promise<ReadinessOut>;
}
