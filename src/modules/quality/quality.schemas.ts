import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

export const MODALITIES = ['image', 'text', 'tabular', 'audio', 'video', 'llm'] as const;
export type Modality = (typeof MODALITIES)[number];

export const ModalityQuery = Type.Object({
  modality: Type.Optional(StringEnum(MODALITIES, { description: 'Only the entries of this modality' })),
});
export type ModalityQuery = Static<typeof ModalityQuery>;

const ParamSpec = Type.Object(
  {
    type: StringEnum(['integer', 'number', 'boolean', 'string', 'integer[]'] as const),
    default: Type.Unknown(),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    enum: Type.Optional(Type.Array(Type.String())),
    description: Type.String(),
  },
  { additionalProperties: false },
);
export const ParamSpecs = Type.Record(Type.String(), ParamSpec, { description: 'Parameters by name: type, default, range' });

export const SEVERITIES = ['error', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CheckOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  modality: StringEnum(MODALITIES),
  severity: StringEnum(SEVERITIES),
  description: Type.String(),
  params: ParamSpecs,
  /** Present for model-assisted checks: they run only when the project has a detector. */
  requires: Type.Optional(Type.String()),
});
export type CheckOut = Static<typeof CheckOut>;

export const ActionOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  modality: StringEnum(MODALITIES),
  description: Type.String(),
  params: ParamSpecs,
});
export type ActionOut = Static<typeof ActionOut>;

// ---- readiness

export const ReadinessBody = Type.Object(
  {
    adapter: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'Training adapter (versa-detect, ultralytics, versa-segment, versa-classify, tabular, …); default from the project type. ' +
          'An adapter not known here is judged by the rule of the project type.',
      }),
    ),
    config: Type.Optional(
      Type.Object(
        {
          min_readiness_score: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Score needed to be ready (default 60)' })),
          min_images_per_class: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Classifiers: images each class needs (default 10)' })),
          min_instances_per_class: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Detectors: instances each class needs in train (default 10)' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ReadinessBody = Static<typeof ReadinessBody>;

export const ReadinessOut = Type.Object({
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  threshold: Type.Number(),
  ready: Type.Boolean(),
  adapter: Type.String(),
  checks: Type.Array(Type.Object({ id: Type.String(), passed: Type.Boolean(), weight: Type.Number(), message: Type.String() })),
  blockers: Type.Array(Type.String(), { description: 'Messages of the failed checks that block training whatever the score' }),
});

// ---- quality report

export const QualityBody = Type.Object(
  {
    checks: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, description: 'Check ids to run (default: every check of the project\'s modality)' })),
    params: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.Record(Type.String({ maxLength: 64 }), Type.Unknown()), {
        description: 'Parameters by check id, e.g. {"blurry": {"threshold": 50}}; unknown names or values out of range are 422',
      }),
    ),
  },
  { additionalProperties: false },
);
export type QualityBody = Static<typeof QualityBody>;

const Item = Type.Object({
  image_id: Type.Optional(Type.Integer()),
  annotation_id: Type.Optional(Type.Integer()),
  sample_id: Type.Optional(Type.Integer()),
  score: Type.Optional(Type.Number({ description: 'Ranking score where the check ranks its items (worst first)' })),
  detail: Type.String(),
});
export type QualityItem = Static<typeof Item>;

export const CheckResultOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  severity: StringEnum(SEVERITIES),
  count: Type.Integer({ description: 'Every affected item' }),
  message: Type.String(),
  items: Type.Array(Item, { description: 'The first 100 items' }),
  image_ids: Type.Optional(Type.Array(Type.Integer(), { description: 'Distinct affected images (first 10,000), for the image grid filter' })),
  skipped: Type.Optional(Type.String({ description: 'Why the check did not run (e.g. no detector registered)' })),
});
export type CheckResultOut = Static<typeof CheckResultOut>;

export const QualityReportOut = Type.Object({
  project_id: Type.Integer(),
  generated_at: Timestamp,
  score: Type.Integer({ minimum: 0, maximum: 100, description: 'Share of images affected by no error- or warning-level check' }),
  features: Type.Object({ computed: Type.Integer({ description: 'Images whose features this report had to compute (cached for next time)' }) }),
  checks: Type.Array(CheckResultOut),
});
export type QualityReportOut = Static<typeof QualityReportOut>;

// ---- profile

const SplitCounts = Type.Record(Type.String(), Type.Integer());
export const ProfileOut = Type.Object({
  project_id: Type.Integer(),
  modality: StringEnum(MODALITIES),
  totals: Type.Object({ images: Type.Integer(), annotated_images: Type.Integer(), annotations: Type.Integer(), classes: Type.Integer() }),
  splits: Type.Record(Type.String(), Type.Object({ images: Type.Integer(), annotated: Type.Integer() }), { description: 'train, valid, test, unassigned' }),
  classes: Type.Array(
    Type.Object({ id: Type.Integer(), name: Type.String(), color: Type.String(), images: Type.Integer(), instances: Type.Integer(), instances_by_split: SplitCounts, images_by_split: SplitCounts }),
  ),
  annotation_types: Type.Record(Type.String(), Type.Integer()),
  annotations_per_image: Type.Array(Type.Object({ annotations: Type.Integer(), images: Type.Integer() })),
  image_sizes: Type.Array(Type.Object({ width: Type.Integer(), height: Type.Integer(), images: Type.Integer() }), { description: 'Distinct sizes, most frequent first (first 200)' }),
  aspect_ratios: Type.Array(Type.Object({ bucket: Type.String(), images: Type.Integer() }), { description: 'width / height in buckets' }),
  box_sizes: Type.Object({ small: Type.Integer(), medium: Type.Integer(), large: Type.Integer() }, { description: 'COCO: area < 32², < 96², larger (bbox annotations)' }),
  box_heatmap: Type.Object({ cells: Type.Integer(), counts: Type.Array(Type.Array(Type.Integer()), { description: 'counts[row][column] of box centres' }) }),
});
export type ProfileOut = Static<typeof ProfileOut>;

// ---- cleaning

export const CleaningActionIn = Type.Object(
  { id: Type.String({ maxLength: 64 }), params: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown())) },
  { additionalProperties: false },
);
export type CleaningActionIn = Static<typeof CleaningActionIn>;

export const CleaningPreviewBody = Type.Object({ actions: Type.Array(CleaningActionIn, { minItems: 1, maxItems: 20 }) }, { additionalProperties: false });
export type CleaningPreviewBody = Static<typeof CleaningPreviewBody>;

export const CleaningApplyBody = Type.Object(
  {
    actions: Type.Array(CleaningActionIn, { minItems: 1, maxItems: 20 }),
    preview_token: Type.Optional(Type.String({ maxLength: 128, description: 'From the preview: refused (409) when the project changed since' })),
  },
  { additionalProperties: false },
);
export type CleaningApplyBody = Static<typeof CleaningApplyBody>;

export const CHANGE_KINDS = ['delete_image', 'delete_annotation', 'update_annotation', 'move_image', 'mark_image', 'delete_class', 'rename_class'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const ChangeOut = Type.Object({
  action: Type.String(),
  kind: StringEnum(CHANGE_KINDS),
  image_id: Type.Optional(Type.Integer()),
  annotation_id: Type.Optional(Type.Integer()),
  class_id: Type.Optional(Type.Integer()),
  sample_id: Type.Optional(Type.Integer()),
  detail: Type.String(),
});
export type ChangeOut = Static<typeof ChangeOut>;

export const CleaningPreviewOut = Type.Object({
  preview_token: Type.String(),
  summary: Type.Record(Type.String(), Type.Integer(), { description: 'Count per change kind' }),
  changes: Type.Array(ChangeOut, { description: 'Every change the apply would make' }),
});
export type CleaningPreviewOut = Static<typeof CleaningPreviewOut>;

export const CleaningApplyOut = Type.Object({
  cleaning_run_id: Type.Integer(),
  summary: Type.Record(Type.String(), Type.Integer()),
});

export const CleaningRunOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  user_id: Nullable(Type.Integer()),
  actions: Type.Array(Type.Object({ id: Type.String(), params: Type.Record(Type.String(), Type.Unknown()) })),
  summary: Type.Record(Type.String(), Type.Integer()),
  status: StringEnum(['applied', 'reverted', 'expired'] as const),
  created_at: Timestamp,
  revertible_until: Timestamp,
  reverted_at: Nullable(Timestamp),
});
export type CleaningRunOut = Static<typeof CleaningRunOut>;

export const CleaningRunParams = Type.Object({ id: Id });

// ---- canonical export

export const CanonicalQuery = Type.Object({
  format: Type.Optional(StringEnum(['jsonl', 'json'] as const, { default: 'jsonl', description: 'jsonl: one record per line (application/x-ndjson); json: one array document' })),
  split: Type.Optional(StringEnum(['train', 'valid', 'test'] as const)),
});
export type CanonicalQuery = Static<typeof CanonicalQuery>;

/** The universal record: one per image or sample, whatever the modality. */
export const CanonicalRecord = Type.Object(
  {
    id: Type.String({ description: '"image:<id>" or "sample:<id>": unique across modalities' }),
    modality: StringEnum(MODALITIES),
    split: Nullable(StringEnum(['train', 'valid', 'test'] as const)),
    media: Nullable(
      Type.Object(
        {
          uri: Type.String({ description: 'Where the bytes are served (relative to the server)' }),
          mime_type: Type.String(),
          sha256: Type.String(),
          width: Type.Optional(Type.Integer()),
          height: Type.Optional(Type.Integer()),
          size_bytes: Type.Optional(Type.Integer()),
          filename: Type.Optional(Type.String()),
        },
        { description: 'The record\'s file (images, audio, video); null for text and tabular records' },
      ),
    ),
    annotations: Type.Array(
      Type.Object({
        id: Type.Integer(),
        label: Type.String({ description: 'Class name' }),
        class_id: Type.Integer(),
        type: Type.String({ description: 'bbox | polygon | mask | classification' }),
        geometry: Type.Unknown({ description: 'In pixels of the original image, as in AnnotationOut' }),
        confidence: Nullable(Type.Number()),
        source: Type.String(),
      }),
    ),
    label: Nullable(Type.String({ description: 'The record-level label (classification), else null' })),
    spans: Nullable(Type.Array(Type.Object({ start: Type.Integer(), end: Type.Integer(), label: Type.String() }), { description: 'Text spans (samples); null for images' })),
    value: Type.Unknown({ description: 'The record\'s own content where it has one: text, a row of columns, a prompt/response; null for images' }),
    metadata: Type.Record(Type.String(), Type.Unknown()),
  },
  { title: 'CanonicalRecord', description: 'Versa\'s universal record schema (JSON Schema draft 2020-12 compatible)' },
);
export type CanonicalRecord = Static<typeof CanonicalRecord>;
