import { Type, type Static } from 'typebox';
import type { Caller } from '../access/caller.js';

/**
 * The readiness report, defined once, with the port that returns it: the readiness module's evaluator builds it,
 * `POST /api/projects/{id}/readiness` answers it and the training gate's 409 carries it.
 */
export const ReadinessOut = Type.Object({
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  threshold: Type.Number(),
  ready: Type.Boolean(),
  adapter: Type.String(),
  checks: Type.Array(Type.Object({ id: Type.String(), passed: Type.Boolean(), weight: Type.Number(), message: Type.String() })),
  blockers: Type.Array(Type.String(), { description: 'Messages of the failed checks that block training whatever the score' }),
});
export type ReadinessOut = Static<typeof ReadinessOut>;

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
