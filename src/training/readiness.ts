import type { Caller } from '../access/caller.js';

/** One readiness check: passed or not, its weight in the score, and what to do about it. */
export interface ReadinessCheck {
  id: string;
  passed: boolean;
  weight: number;
  message: string;
}

/** The readiness report (the quality branch's `POST /api/projects/{id}/readiness` answers the same shape). */
export interface ReadinessOut {
  /** 0–100: the weights of the passed checks over all weights. */
  score: number;
  threshold: number;
  ready: boolean;
  adapter: string | null;
  checks: ReadinessCheck[];
  /** What stops training outright, in words. */
  blockers: string[];
}

export interface ReadinessOptions {
  adapter?: string;
  config?: { min_readiness_score?: number };
}

/**
 * Decides whether a project's data is ready to train on. Training depends on this interface only; the data-quality
 * module provides the evaluator (src/modules/quality/readiness.ts), handed over in app.ts.
 */
export interface ReadinessEvaluator {
  evaluate(caller: Caller, projectId: number, options: ReadinessOptions): Promise<ReadinessOut>;
}
