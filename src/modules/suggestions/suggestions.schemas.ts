import { Type, type Static } from 'typebox';
import { Id, Nullable } from '../../http/schemas.js';

/** At most this many images per request: the editor asks for the few images ahead of the open one. */
export const PREFETCH_LIMIT = 10;

export const PrefetchRequest = Type.Object(
  {
    image_ids: Type.Array(Id, {
      minItems: 1,
      maxItems: PREFETCH_LIMIT,
      description: 'Images of this project ahead of the annotator in their queue, nearest first',
    }),
  },
  { additionalProperties: false },
);
export type PrefetchRequest = Static<typeof PrefetchRequest>;

export const PrefetchOut = Type.Object({
  model_id: Type.Integer({ description: "The project's production model that predicts them" }),
  queued: Type.Array(Type.Integer(), { description: 'Images the job will predict: those without an accepted annotation or open suggestions from the model' }),
  job_id: Nullable(Type.Integer({ description: "The project's prefetch job: the one just queued, or the one already queued or running (then nothing new is queued)" })),
});
export type PrefetchOut = Static<typeof PrefetchOut>;
