import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { IMAGE_PARAM_RANGES as IMAGE, TABULAR_PARAMS as TABULAR, type ParamSpec } from '../../training/adapters.js';
import { JobOut } from '../jobs/jobs.schemas.js';

/** An optional request field that takes a training parameter's type and range from its one definition. */
function param(spec: Omit<ParamSpec, 'default'>, options: { description?: string } = {}) {
  const range = { minimum: spec.min, maximum: spec.max, ...(spec.multipleOf !== undefined ? { multipleOf: spec.multipleOf } : {}), ...options };
  return Type.Optional(spec.type === 'integer' ? Type.Integer(range) : Type.Number(range));
}

const Metrics = Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]), {
  description: 'Detection `map50, map50_95, precision, recall`; classification `accuracy, top5`; tabular `accuracy, f1` or `rmse, r2`; '
    + 'losses `train_loss, val_loss`; `test_*` for the test split',
});

export const TrainRequest = Type.Object(
  {
    version_id: Id,
    adapter: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'From GET /api/training/adapters; by project type when absent' })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "One of the adapter's models; its default when absent" })),
    epochs: param(IMAGE.epochs),
    imgsz: param(IMAGE.imgsz),
    batch: param(IMAGE.batch),
    device: Type.String({ default: 'auto', pattern: '^(auto|cpu|cuda(:[0-9]{1,2})?)$', description: '`auto` is CUDA when available, else CPU' }),
    seed: param(IMAGE.seed),
    time_budget_s: param(IMAGE.time_budget_s, { description: 'Stop after this many seconds' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
    require_ready: Type.Boolean({ default: true, description: 'Apply the readiness gate' }),
    min_readiness_score: Type.Number({ minimum: 0, maximum: 100, default: 60 }),
    base_model_id: Type.Optional(Type.Integer({
      minimum: 1,
      maximum: 2_147_483_647,
      description: 'Fine-tune: start from this registered model\'s trainer checkpoint (a model Versa trained with the same adapter, in any '
        + 'project you can read). Classes are matched by name, ignoring case: a new class gets fresh output rows, one the version lacks is dropped. '
        + '`model` and `imgsz` default to the base\'s; another `model` is 422',
    })),
    pretrained_weights: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'Start from a weights file the operator put under MODELS_ROOT (relative to it): a torchvision state dict (.pth) for '
        + 'versa-classify, a Versa checkpoint for versa-detect, an Ultralytics .pt for ultralytics. Read without running code; nothing is downloaded',
    })),
  },
  { additionalProperties: false },
);
export type TrainRequest = Static<typeof TrainRequest>;

/** `POST /api/projects/{id}/adapters/train`: the parameters trainer/versa_trainer/tabular.py reads, and the gate's. */
export const TabularTrainRequest = Type.Object(
  {
    adapter: StringEnum(['tabular'] as const, { description: 'The tabular-learning adapter (scikit-learn histogram gradient boosting)' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'The experiment\'s (and model\'s) name; `tabular <target>` when absent' })),
    epochs: param(TABULAR.epochs, { description: `Boosting iterations (default ${TABULAR.epochs.default})` }),
    lr: param(TABULAR.lr, { description: `Learning rate (default ${TABULAR.lr.default})` }),
    max_depth: param(TABULAR.max_depth, { description: 'Depth limit of each tree (none when absent)' }),
    seed: param(TABULAR.seed, { description: `Random state (default ${TABULAR.seed.default})` }),
    require_ready: Type.Boolean({ default: true, description: 'Apply the readiness gate' }),
    min_readiness_score: Type.Number({ minimum: 0, maximum: 100, default: 60 }),
  },
  { additionalProperties: false },
);
export type TabularTrainRequest = Static<typeof TabularTrainRequest>;

export const TrainJobOut = Type.Object({
    ...JobOut.properties,
    version_id: Nullable(Type.Integer()),
    experiment_id: Type.Integer(),
    adapter: Type.String(),
    epoch: Type.Integer({ description: 'Epochs done' }),
    epochs: Nullable(Type.Integer()),
    metrics: Metrics,
    model_id: Nullable(Type.Integer({ description: 'The registered model, once the run succeeded' })),
    queue_position: Nullable(Type.Integer({
      minimum: 1,
      description: "While queued, the run's place among the instance's training runs waiting to start (1: next). Runs admitted to "
        + 'the job queue come first, then those waiting for a slot of their project (TRAINING_PER_PROJECT), oldest first; another '
        + "project's run admitted meanwhile goes ahead of a waiting one. null once running or ended",
    })),
});
export type TrainJobOut = Static<typeof TrainJobOut>;

export const TrainStatusOut = Type.Object({
  status: StringEnum(['active', 'latest', 'idle'] as const),
  job: Nullable(TrainJobOut),
});

export const ParamSpecOut = Type.Object({
  type: Type.String(),
  default: Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  description: Type.String(),
});

export const AdapterOut = Type.Object({
  name: Type.String(),
  title: Type.String(),
  tasks: Type.Array(Type.String()),
  modality: Type.String(),
  available: Type.Boolean(),
  reason: Nullable(Type.String({ description: 'What to install when it is not available' })),
  devices: Type.Array(Type.String()),
  models: Type.Array(Type.String()),
  default_model: Type.String(),
  params: Type.Record(Type.String(), ParamSpecOut),
});
export type AdapterOut = Static<typeof AdapterOut>;

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
