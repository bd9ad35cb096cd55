import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

/** An experiment's metrics, as training records them (the training job's too). */
export const Metrics = Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]), {
  description: 'Detection `map50, map50_95, precision, recall`; classification `accuracy, top5`; tabular `accuracy, f1` or `rmse, r2`; '
    + 'losses `train_loss, val_loss`; `test_*` for the test split',
});

export const ExperimentStatus = StringEnum(['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const);

export const ExperimentOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  name: Type.String(),
  tags: Type.Array(Type.String()),
  notes: Type.String(),
  status: ExperimentStatus,
  adapter: Type.String(),
  version_id: Nullable(Type.Integer()),
  job_id: Nullable(Type.Integer()),
  model_id: Nullable(Type.Integer()),
  params: Type.Record(Type.String(), Type.Unknown(), { description: 'Every effective training parameter, defaults included' }),
  metrics: Metrics,
  best_epoch: Nullable(Type.Integer()),
  epoch: Type.Integer(),
  error: Nullable(Type.String()),
  created_at: Timestamp,
  finished_at: Nullable(Timestamp),
  duration_s: Nullable(Type.Number()),
});
export type ExperimentOut = Static<typeof ExperimentOut>;

const ClassEvaluationOut = Type.Object({
  class_id: Type.Integer(),
  name: Type.String(),
  instances: Type.Integer(),
  ap50: Nullable(Type.Number()),
  ap50_95: Nullable(Type.Number()),
  precision: Nullable(Type.Number()),
  recall: Nullable(Type.Number()),
  f1: Nullable(Type.Number({ description: 'The best F1 over confidence thresholds, at IoU 0.5' })),
  conf_threshold: Nullable(Type.Number({ description: 'The confidence that gives that F1; null without ground truth or a right detection' })),
  pr_curve: Nullable(Type.Array(Type.Number(), { description: 'Interpolated precision at recall 0, 0.01, …, 1 (101 points) at IoU 0.5' })),
});

export const SplitEvaluationOut = Type.Object({
  per_class: Type.Array(ClassEvaluationOut),
  confusion: Type.Object({
    labels: Type.Array(Type.String(), { description: 'The classes, then `background`' }),
    matrix: Type.Array(Type.Array(Type.Integer()), {
      description: 'Rows true class, columns predicted, each class cut at its F1 threshold; the background row counts false positives, '
        + 'the background column false negatives',
    }),
  }),
});

export type SplitEvaluationOut = Static<typeof SplitEvaluationOut>;

export const ExperimentDetailOut = Type.Object({
    ...ExperimentOut.properties,
    history: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: '[{epoch, <metric>: number, …}]' }),
    per_class: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: '[{class_id, name, <metric>: number, …}]' }),
    confusion: Nullable(Type.Array(Type.Array(Type.Integer()), { description: 'Classifiers: rows true class, columns predicted' })),
    environment: Type.Record(Type.String(), Type.Unknown(), { description: 'Python, torch, device, threads' }),
    artifacts: Type.Record(Type.String(), Type.String()),
    recipe: Type.Record(Type.String(), Type.Unknown(), {
      description: "The version's split, preprocessing and augmentation; `initial_weights` when the run did not start from scratch: the "
        + 'base model (`from: model`, its id, name, project, experiment and the classes `matched`, `new` and `dropped`) or `from: pretrained_weights`',
    }),
    analysis: Nullable(Type.Record(Type.String(), SplitEvaluationOut, {
      description: "Detectors: the final model's evaluation per split (`valid`, `test`); null for other runs. Per-image errors: GET /api/experiments/{id}/errors",
    })),
});
export type ExperimentDetailOut = Static<typeof ExperimentDetailOut>;

export const ExperimentPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '\\S' }), { maxItems: 20 })),
    notes: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ExperimentPatch = Static<typeof ExperimentPatch>;

export const ExperimentListQuery = Type.Object({
  status: Type.Optional(ExperimentStatus),
  adapter: Type.Optional(Type.String({ maxLength: 64 })),
  version_id: Type.Optional(Id),
  tag: Type.Optional(Type.String({ maxLength: 50 })),
  limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
export type ExperimentListQuery = Static<typeof ExperimentListQuery>;

export const CompareRequest = Type.Object({ ids: Type.Array(Id, { minItems: 1, maxItems: 20 }) }, { additionalProperties: false });

export const CompareOut = Type.Object({
  experiments: Type.Array(ExperimentDetailOut),
  params: Type.Record(Type.String(), Type.Array(Type.Unknown()), { description: 'name → value per experiment, in the order given' }),
  metrics: Type.Record(Type.String(), Type.Array(Type.Union([Type.Number(), Type.Null()]))),
});

export const ERROR_KINDS = ['false_positive', 'false_negative', 'confusion'] as const;

export const ExperimentErrorsQuery = Type.Object({
  split: StringEnum(['valid', 'test'] as const, { default: 'valid' }),
  kind: Type.Optional(StringEnum(ERROR_KINDS, { description: 'Rank by this count; by all errors together when absent' })),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
});
export type ExperimentErrorsQuery = Static<typeof ExperimentErrorsQuery>;

const BoxOut = Type.Object({ x: Type.Number(), y: Type.Number(), width: Type.Number(), height: Type.Number() });

export const ImageErrorsOut = Type.Object({
  image_id: Type.Integer({ description: 'The project image the version image was made from' }),
  version_image_id: Type.Integer(),
  false_positives: Type.Integer(),
  false_negatives: Type.Integer(),
  confusions: Type.Integer({ description: 'Detections on an object of another class' }),
  predictions: Type.Array(Type.Object({
    class_id: Nullable(Type.Integer({ description: "The project's class of that name; null when it is gone" })),
    class_name: Type.String(),
    confidence: Type.Number(),
    bbox: BoxOut,
  }), { description: "The run's detections kept at their class's F1 threshold, in the project image's pixels" }),
});
export type ImageErrorsOut = Static<typeof ImageErrorsOut>;

export const ExperimentErrorsOut = Type.Object({
  experiment_id: Type.Integer(),
  split: Type.String(),
  kind: Nullable(Type.String()),
  total: Type.Integer({ description: 'Images of the split (that the caller may see) with at least one such error' }),
  images: Type.Array(ImageErrorsOut, { description: 'Most errors first' }),
});
export type ExperimentErrorsOut = Static<typeof ExperimentErrorsOut>;
