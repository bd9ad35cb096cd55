import { Type, type Static } from 'typebox';

export const ReadinessBody = Type.Object(
  {
    adapter: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'Training adapter (versa-detect, ultralytics, versa-segment, versa-classify, tabular, text, …); default from the project type, ' +
          'or `tabular` / `text` for a project that holds such samples and no images. ' +
          'An adapter not known here is judged by the rule of the project type.',
      }),
    ),
    config: Type.Optional(
      Type.Object(
        {
          min_readiness_score: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Score needed to be ready (default 60)' })),
          min_images_per_class: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Classifiers: images each class needs (default 10)' })),
          min_instances_per_class: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Detectors: instances each class needs in train (default 10)' })),
          min_samples_per_class: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Sample adapters (tabular, text): samples each class needs, or numeric values a regression target needs (default 10)' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ReadinessBody = Static<typeof ReadinessBody>;

/** Readiness config: the thresholds the rules read (defaults in readiness-rules.logic.ts). */
export type ReadinessConfig = NonNullable<ReadinessBody['config']>;
