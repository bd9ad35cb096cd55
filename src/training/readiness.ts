import { Type, type Static } from 'typebox';
import type { Caller } from '../access/caller.js';
import { StringEnum } from '../http/schemas.js';

/**
 * The readiness report, defined once, with the port that returns it: the readiness module's evaluator builds it,
 * `POST /api/projects/{id}/readiness` answers it and the training gate's 409 carries it.
 */
/** The fixes a page can offer for a failed check, as a link or a button. */
export const READINESS_FIX_ACTIONS = ['upload', 'label', 'label_unannotated', 'remove_unannotated', 'assign_splits', 'classes', 'export', 'label_samples'] as const;
export type ReadinessFixAction = (typeof READINESS_FIX_ACTIONS)[number];

export const ReadinessFix = Type.Object(
  {
    text: Type.String({ description: 'What is wrong and what to do, in plain words ("29 images of 318 have no labels — label them, or remove them …")' }),
    actions: Type.Array(StringEnum(READINESS_FIX_ACTIONS), {
      description:
        'The fixes, first the usual one: `upload` images; `label` in the editor; `label_unannotated` the images without labels; ' +
        '`remove_unannotated` (the cleaning action remove_unannotated_images); `assign_splits`; `classes` (edit the classes); ' +
        '`export` (train elsewhere); `label_samples`',
    }),
  },
);
export type ReadinessFix = Static<typeof ReadinessFix>;

export const ReadinessOut = Type.Object({
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  threshold: Type.Number(),
  ready: Type.Boolean(),
  adapter: Type.String(),
  checks: Type.Array(
    Type.Object({
      id: Type.String(),
      passed: Type.Boolean(),
      weight: Type.Number(),
      message: Type.String(),
      fix: Type.Optional(Type.Object(ReadinessFix.properties, { description: 'A failed check: why, in plain words, and the fix to offer' })),
    }),
  ),
  blockers: Type.Array(Type.String(), { description: 'Messages of the failed checks that block training whatever the score' }),
  summary: Type.String({
    description: 'Why the project is or is not ready, in one sentence: the blockers\' fixes, else (below the gate) the failed checks\' fixes, heaviest first',
  }),
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
