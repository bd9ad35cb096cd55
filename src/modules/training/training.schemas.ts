import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { Metrics } from '../experiments/experiments.schemas.js';
import { JobOut } from '../jobs/jobs.schemas.js';
import { ReadinessOut } from '../../training/readiness.js';
import { IMAGE_PARAM_RANGES as IMAGE, TABULAR_PARAMS as TABULAR, type ParamSpec } from '../../training/adapters.js';

/** An optional request field that takes a training parameter's type and range from its one definition. */
function param(spec: Omit<ParamSpec, 'default'>, options: { description?: string } = {}) {
  const range = { minimum: spec.min, maximum: spec.max, ...(spec.multipleOf !== undefined ? { multipleOf: spec.multipleOf } : {}), ...options };
  return Type.Optional(spec.type === 'integer' ? Type.Integer(range) : Type.Number(range));
}

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

/** 409 of a training request: the readiness gate blocked the run, or its version is not ready. */
export const GateOut = Type.Object(
  { detail: Type.String(), readiness: Type.Optional(ReadinessOut) },
  { additionalProperties: true, description: 'Readiness gate blocked the run (with `readiness`), or the version is not ready' },
);
