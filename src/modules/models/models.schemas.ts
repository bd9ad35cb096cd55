import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ModelLifecycleEventsTable, ModelsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp, ValidationErrorOut } from '../../http/schemas.js';

export const MODEL_FORMATS = ['onnx', 'pt', 'other'] as const;
export type ModelFormat = (typeof MODEL_FORMATS)[number];
/** `tabular`: a gradient-boosted tree model the tabular adapter trained (a pickle, format `other`; not run by Versa's ONNX runtime). */
/** `pose` and `obb`: Ultralytics keypoint and oriented-box detectors (auto-annotate writes keypoints and rotated boxes). */
export const MODEL_TASKS = ['detect', 'segment', 'classify', 'sam-encoder', 'sam-decoder', 'tabular', 'pose', 'obb'] as const;
/** Tasks whose models look at a whole image and say what is in it: they suggest annotations and rank images. */
export const IMAGE_MODEL_TASKS = ['detect', 'segment', 'classify'] as const;
export type ModelTask = (typeof MODEL_TASKS)[number];
export const LIFECYCLES = ['development', 'staging', 'production', 'archived'] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];
export const MODEL_SOURCES = ['upload', 'path', 'training_run'] as const;
export type ModelSource = (typeof MODEL_SOURCES)[number];

const ModelName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Unique within the project' });
const ClassNames = Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }), {
  maxItems: 10_000,
  description: 'Class names in the order of the model\'s class indices; read from the ONNX metadata when it has them',
});
const Task = StringEnum(MODEL_TASKS, {
  description: 'What the model does; read from the ONNX metadata (Ultralytics `task`) when absent, else `detect`',
});
/** 422 for a request that is malformed (a list of issues) or names a model or image that cannot be used (a message). */
export const UnprocessableOut = Type.Object(
  { detail: Type.Union([Type.String(), ValidationErrorOut.properties.detail]) },
  { additionalProperties: true, description: 'Invalid request, or a model or image that cannot be used' },
);

export const InputSize = Type.Object({ width: Type.Integer({ minimum: 1 }), height: Type.Integer({ minimum: 1 }) });

export const ModelRegister = Type.Object(
  {
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'A file under MODELS_ROOT (absolute, or relative to it)' })),
    run_weights: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'A weights file under RUNS_ROOT as listed by `GET /api/models/runs` (`path` there); registers it with source `training_run`',
    })),
    name: Type.Optional(ModelName),
    task: Type.Optional(Task),
    class_names: Type.Optional(ClassNames),
  },
  { additionalProperties: false, description: 'Exactly one of `path` and `run_weights`.' },
);
export type ModelRegister = Static<typeof ModelRegister>;

export const ModelUploadBody = Type.Object({
  file: Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'The weights file (.onnx; .pt and others are stored for external trainers)' }),
  name: Type.Optional(Type.String({ description: 'Defaults to the file name without its extension' })),
  task: Type.Optional(Task),
  class_names: Type.Optional(Type.String({ description: 'A JSON array of names, or names separated by commas or new lines' })),
});

export const LifecycleUpdate = Type.Object({ lifecycle: StringEnum(LIFECYCLES) }, { additionalProperties: false });
export type LifecycleUpdate = Static<typeof LifecycleUpdate>;

export const LifecycleEventOut = Type.Object({
  from: Nullable(StringEnum(LIFECYCLES)),
  to: StringEnum(LIFECYCLES),
  changed_by: Nullable(Type.Integer({ description: 'The user who made the change (null once that account is deleted)' })),
  changed_at: Timestamp,
  reason: Nullable(Type.String()),
});
export type LifecycleEventOut = Static<typeof LifecycleEventOut>;

export const ModelOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  name: Type.String(),
  format: StringEnum(MODEL_FORMATS),
  task: StringEnum(MODEL_TASKS),
  input_size: Nullable(InputSize),
  class_names: Type.Array(Type.String()),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  lifecycle: StringEnum(LIFECYCLES),
  source: StringEnum(MODEL_SOURCES),
  path: Nullable(Type.String({ description: 'The file, for models registered from a path or a training run' })),
  blob: Nullable(Type.String({ description: 'The stored object, for uploaded models' })),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp,
  experiment_id: Nullable(Type.Integer({ description: 'The training experiment that produced it' })),
  version_id: Nullable(Type.Integer({ description: 'The dataset version it was trained on' })),
  metrics: Nullable(Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]), { description: 'Its training run\'s final metrics' })),
  lifecycle_history: Type.Array(LifecycleEventOut, { description: 'Every lifecycle change, oldest first; registration is the first' }),
  class_thresholds: Nullable(Type.Record(Type.String(), Type.Number(), {
    description: 'Class name → the confidence that maximised its F1 in the training run, stored when the model was promoted to production; '
      + 'auto-annotate keeps each class\'s detections at or above its threshold when the request gives no confidence',
  })),
});
export type ModelOut = Static<typeof ModelOut>;

export const ModelListQuery = Type.Object({ project_id: Type.Optional(Id) });
export const ModelParams = Type.Object({ model_id: Id });

export const RunWeightsOut = Type.Object({
  path: Type.String({ description: 'Relative to RUNS_ROOT; pass it as `run_weights` to register the file' }),
  task: Type.String({ description: 'The run folder\'s task directory (detect, segment, …)' }),
  run: Type.String({ description: 'The run\'s name' }),
  file: Type.String(),
  format: StringEnum(MODEL_FORMATS),
  size_bytes: Type.Integer(),
  modified_at: Timestamp,
  source: Type.Optional(StringEnum(['runs_root', 'versa'] as const, { description: 'A folder under RUNS_ROOT, or a Versa training run' })),
  metrics: Type.Optional(Nullable(Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]), { description: 'The last epoch\'s metrics (results.csv), or the run\'s final metrics' }))),
  experiment_id: Type.Optional(Type.Integer()),
  project_id: Type.Optional(Type.Integer()),
  model_id: Type.Optional(Nullable(Type.Integer())),
});
export type RunWeightsOut = Static<typeof RunWeightsOut>;

export const ExecutionProviderOut = Type.Object({
  name: Type.String(),
  bundled: Type.Boolean({ description: 'Shipped with this onnxruntime build (others need their libraries installed)' }),
});

export const DeviceOut = Type.Object({
  default_device: StringEnum(['cpu', 'cuda'] as const, { description: 'The device inference runs on' }),
  cuda_available: Type.Boolean(),
  execution_providers: Type.Array(ExecutionProviderOut),
  inference_threads: Type.Integer({ description: 'Threads one model run uses' }),
  batch_lanes: Type.Integer({ description: 'Runs an auto-annotate job keeps going at once, each on its own worker with inference_threads / batch_lanes threads' }),
  cpu_count: Type.Integer(),
  onnxruntime_version: Type.String(),
});
export type DeviceOut = Static<typeof DeviceOut>;

export type ModelRow = Selectable<ModelsTable>;
export type LifecycleEventRow = Selectable<ModelLifecycleEventsTable>;

export function toModelOut(row: ModelRow, events: LifecycleEventRow[]): ModelOut {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    format: row.format as ModelFormat,
    task: row.task as ModelTask,
    input_size: row.input_width !== null && row.input_height !== null ? { width: row.input_width, height: row.input_height } : null,
    class_names: JSON.parse(row.class_names) as string[],
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    lifecycle: row.lifecycle as Lifecycle,
    source: row.source as ModelSource,
    path: row.path,
    blob: row.blob_key,
    created_by: row.created_by,
    created_at: row.created_at,
    experiment_id: row.experiment_id ?? null,
    version_id: row.trained_version_id ?? null,
    metrics: row.metrics ? (JSON.parse(row.metrics) as Record<string, number | null>) : null,
    lifecycle_history: events.map((e) => ({
      from: e.from_lifecycle as Lifecycle | null,
      to: e.to_lifecycle as Lifecycle,
      changed_by: e.changed_by,
      changed_at: e.changed_at,
      reason: e.reason,
    })),
    class_thresholds: row.class_thresholds ? (JSON.parse(row.class_thresholds) as Record<string, number>) : null,
  };
}

export const ProjectModelsQuery = Type.Object({
  include_shared: Type.Boolean({
    default: false,
    description: 'Also list the production models of your other projects with the same owner or organization (those you can read), marked `shared`',
  }),
});

export const SharedModelOut = Type.Object(
  {
    project_id: Type.Integer({ description: 'The project the model belongs to' }),
    project_name: Type.String(),
    matched: Type.Array(Type.String(), { description: "The model's classes this project has (matched by name, case-insensitive)" }),
    unmatched: Type.Array(Type.String(), {
      description: "The model's classes this project lacks: auto-annotate skips their detections, or creates the classes with `create_missing_classes`",
    }),
  },
  { description: "Another project's production model this project can use (auto-annotate takes its id)" },
);

export const ProjectModelOut = Type.Object({ ...ModelOut.properties, shared: Type.Optional(SharedModelOut) });
export type ProjectModelOut = Static<typeof ProjectModelOut>;
