import { Type } from 'typebox';
import { StringEnum } from '../../http/schemas.js';
import { ExportRequest } from '../exports/exports.schemas.js';
import { TrainRequest } from '../training/training.schemas.js';
import { VersionCreate } from '../versions/versions.schemas.js';
import { REVIEW_STATES, SPLIT_NAMES } from '../../lib/vocabulary.js';

/** The params schemas of the built-in step types (the JSON Schema GET /api/pipelines/step-types serves). */
const ClassName = Type.String({ minLength: 1, maxLength: 100 });
const ModelRef = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: 200 })], {
  description: "A model of the project: its id, or its name. Default: the project's production (else newest) detect or segment model that has every class in `classes`",
});

export const SelectParams = Type.Object(
  {
    source: Type.Optional(StringEnum(['project', 'version'] as const, { default: 'project', description: "The live project's images, or the source images frozen into a version" })),
    version_id: Type.Optional(Type.Integer({ minimum: 1, description: "With source 'version': the version (default: the run's version_id)" })),
    splits: Type.Optional(Type.Array(StringEnum([...SPLIT_NAMES, 'none']), { maxItems: 4, description: 'Keep images of these splits (`none`: without a split)' })),
    class_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000, description: 'Keep images with an annotation of one of these classes' })),
    review_states: Type.Optional(Type.Array(StringEnum(REVIEW_STATES), { maxItems: 5 })),
    annotated: Type.Optional(Type.Boolean({ description: 'true: only annotated images; false: only unannotated ones' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);

export const DetectParams = Type.Object(
  {
    model: Type.Optional(ModelRef),
    confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.25 })),
    iou: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.45 })),
    classes: Type.Optional(Type.Array(ClassName, { maxItems: 1000, description: "Keep only these of the model's classes" })),
  },
  { additionalProperties: false },
);

export const SamParams = Type.Object(
  { classes: Type.Optional(Type.Array(ClassName, { maxItems: 1000, description: 'Segment only detections of these classes (default all)' })) },
  { additionalProperties: false },
);

export const FilterParams = Type.Object(
  {
    classes: Type.Optional(Type.Array(ClassName, { maxItems: 1000, description: 'Keep only these classes' })),
    min_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    max_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    min_width: Type.Optional(Type.Number({ minimum: 0 })),
    min_height: Type.Optional(Type.Number({ minimum: 0 })),
    min_area: Type.Optional(Type.Number({ minimum: 0, description: 'Box area in pixels' })),
    max_area: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const RuleParams = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 100, description: 'The class each of whose detections is checked (A)' }),
    requires: Type.Array(
      Type.Object(
        {
          class: ClassName,
          min_overlap: Type.Optional(Type.Number({
            minimum: 0,
            maximum: 1,
            default: 0.5,
            description: "Fraction of B's box that must lie inside A's box (1: B contained in A)",
          })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 20, description: 'What each A needs (B): e.g. a helmet and a vest for each person' },
    ),
    min_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0, description: 'Ignore detections scored lower' })),
  },
  { additionalProperties: false },
);

export const WriteParams = Type.Object(
  {
    source: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9:_-]{0,63}$', description: "Annotation source (default: the detection's, e.g. `model:12` or `sam`)" })),
    create_missing_classes: Type.Optional(Type.Boolean({ default: true })),
    classes: Type.Optional(Type.Array(ClassName, { maxItems: 1000, description: 'Write only these classes' })),
  },
  { additionalProperties: false },
);

export const FlagParams = Type.Object(
  {
    comment: Type.Optional(Type.String({ maxLength: 2000, default: 'Flagged by a pipeline', description: 'The review comment; the run id is added' })),
    only_violations: Type.Optional(Type.Boolean({ default: true, description: 'When a rule ran before: flag only images that broke it' })),
  },
  { additionalProperties: false },
);

export const ReportParams = Type.Object(
  { max_images: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, default: 1000, description: 'Images listed in the report (counts cover all)' })) },
  { additionalProperties: false },
);

/** A create_version step's params are the body of POST /api/projects/{id}/versions. */
export const VersionParams = VersionCreate;

/** An export step's params are the body of POST /api/projects/{id}/export (`version_id` defaults to the run's). */
export const ExportParams = Type.Object(
  { ...ExportRequest.properties, include_unannotated: Type.Optional(ExportRequest.properties.include_unannotated) },
  { additionalProperties: false },
);

export const WebhookParams = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'Must start with a prefix listed in WEBHOOK_ALLOWLIST' }),
    include_report: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const QualityParams = Type.Object(
  {
    checks: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'quality_check plugins to run (default all)' })),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const CleaningParams = Type.Object(
  {
    action: Type.String({ minLength: 1, maxLength: 100, description: 'A cleaning_action plugin' }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const TrainParams = Type.Object(
  {
    adapter: Type.String({ minLength: 1, maxLength: 100, description: 'A training_adapter plugin' }),
    version_id: Type.Optional(Type.Integer({ minimum: 1, description: "Default: the version a create_version step made, else the run's version_id" })),
    // The training route's own schema (every field optional here; the route's defaults apply when the step runs).
    params: Type.Optional(Type.Partial(Type.Omit(TrainRequest, ['version_id', 'adapter']), {
      additionalProperties: false,
      description: 'The rest of the body of POST /api/projects/{id}/train: model, epochs, imgsz, batch, device, …',
    })),
  },
  { additionalProperties: false },
);
