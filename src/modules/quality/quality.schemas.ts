import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';

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
  modality: StringEnum(MODALITIES, { description: 'The modality of the records the check reads' }),
  severity: StringEnum(SEVERITIES),
  count: Type.Integer({ description: 'Every affected item' }),
  message: Type.String(),
  items: Type.Array(Item, { description: 'The first 100 items' }),
  image_ids: Type.Optional(Type.Array(Type.Integer(), { description: 'Distinct affected images (first 10,000), for the image grid filter' })),
  sample_ids: Type.Optional(Type.Array(Type.Integer(), { description: 'Distinct affected samples (first 10,000)' })),
  skipped: Type.Optional(Type.String({ description: 'Why the check did not run (e.g. no detector registered)' })),
});
export type CheckResultOut = Static<typeof CheckResultOut>;

export const QualityReportOut = Type.Object({
  project_id: Type.Integer(),
  generated_at: Timestamp,
  score: Type.Integer({ minimum: 0, maximum: 100, description: 'Share of records (images and samples) affected by no error- or warning-level check' }),
  features: Type.Object({ computed: Type.Integer({ description: 'Images whose features this report had to compute (cached for next time)' }) }),
  checks: Type.Array(CheckResultOut),
});
export type QualityReportOut = Static<typeof QualityReportOut>;

// ---- profile

const SplitCounts = Type.Record(Type.String(), Type.Integer());

const SampleSplits = Type.Object({ train: Type.Integer(), valid: Type.Integer(), test: Type.Integer(), unassigned: Type.Integer() });
const SAMPLE_MODALITIES = ['text', 'tabular', 'audio', 'video', 'llm'] as const;

export const SampleProfileOut = Type.Object(
  {
    total: Type.Integer(),
    labelled: Type.Integer({ description: 'Samples with a label, spans or a value' }),
    splits: SampleSplits,
    modalities: Type.Array(Type.Object({ modality: StringEnum(SAMPLE_MODALITIES), samples: Type.Integer(), labelled: Type.Integer(), splits: SampleSplits })),
    labels: Type.Array(
      Type.Object({ modality: StringEnum(SAMPLE_MODALITIES), name: Type.String(), samples: Type.Integer(), by_split: SplitCounts }),
      { description: 'Samples per class (a multi-label sample under its first class), most first' },
    ),
    lengths: Type.Array(
      Type.Object({
        modality: StringEnum(['text', 'llm'] as const),
        measures: Type.String({ description: 'What is counted: the text, or the prompt, responses and messages of an LLM record (characters)' }),
        samples: Type.Integer(),
        min: Type.Integer(),
        median: Type.Number(),
        p95: Type.Number(),
        max: Type.Integer(),
        histogram: Type.Array(Type.Object({ from: Type.Integer(), to: Type.Integer({ description: 'Exclusive' }), samples: Type.Integer() })),
      }),
    ),
    tabular: Nullable(
      Type.Object({
        target: Nullable(Type.String()),
        task: Nullable(StringEnum(['classification', 'regression'] as const)),
        rows: Type.Integer(),
        columns: Type.Array(
          Type.Object({
            name: Type.String(),
            type: Type.String({ description: 'integer, number, boolean, category, text or date (as the import inferred)' }),
            target: Type.Boolean(),
            missing: Type.Integer(),
            distinct: Type.Integer({ description: 'Distinct present values (counted up to a limit: see distinct_capped)' }),
            distinct_capped: Type.Boolean({ description: 'More values than were counted: distinct is a lower bound, top_values approximate' }),
            min: Type.Optional(Type.Number()),
            max: Type.Optional(Type.Number()),
            mean: Type.Optional(Type.Number()),
            top_values: Type.Optional(Type.Array(Type.Object({ value: Type.String(), samples: Type.Integer() }), { description: 'Non-numeric columns: the most frequent values (first 10)' })),
          }),
        ),
      }),
    ),
  },
  { description: 'Projects with samples: counts per modality and split, classes, text lengths, tabular columns' },
);
export type SampleProfileOut = Static<typeof SampleProfileOut>;
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
  samples: Type.Optional(SampleProfileOut),
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
  split: Type.Optional(StringEnum(SPLIT_NAMES)),
});
export type CanonicalQuery = Static<typeof CanonicalQuery>;

/** The universal record: one per image or sample, whatever the modality. */
const FileMedia = Type.Object(
  {
    uri: Type.String({ description: 'Where the bytes are served (relative to the server)' }),
    mime_type: Type.String(),
    sha256: Type.String(),
    width: Type.Optional(Type.Integer()),
    height: Type.Optional(Type.Integer()),
    size_bytes: Type.Optional(Type.Integer()),
    filename: Type.Optional(Type.String()),
    duration_s: Type.Optional(Nullable(Type.Number())),
    sample_rate: Type.Optional(Type.Number()),
    fps: Type.Optional(Type.Number()),
    channels: Type.Optional(Type.Integer()),
  },
  { title: 'FileMedia', description: 'Images, audio and video: the stored file' },
);
const ContentMedia = Type.Union(
  [
    Type.Object({ text: Type.String() }, { title: 'TextMedia' }),
    Type.Object({ row: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])) }, { title: 'RowMedia', description: 'Tabular: the feature columns (the target is `label` or `value`)' }),
    Type.Object(
      {
        prompt: Type.Optional(Type.String()),
        response: Type.Optional(Type.String()),
        chosen: Type.Optional(Type.String()),
        rejected: Type.Optional(Type.String()),
        messages: Type.Optional(Type.Array(Type.Object({ role: Type.String(), content: Type.String() }))),
      },
      { title: 'LlmMedia' },
    ),
  ],
  { description: 'Text, tabular and LLM samples: their content itself' },
);
const ImageAnnotation = Type.Object(
  {
    id: Type.Integer(),
    label: Type.String({ description: 'Class name' }),
    class_id: Type.Integer(),
    type: Type.String({ description: 'bbox | polygon | mask | classification' }),
    geometry: Type.Unknown({ description: 'In pixels of the original image, as in AnnotationOut' }),
    confidence: Nullable(Type.Number()),
    source: Type.String(),
    status: StringEnum(['accepted', 'suggested'] as const, { description: 'suggested: model output no person has accepted yet' }),
  },
  { title: 'ImageAnnotation' },
);
const SegmentAnnotation = Type.Object(
  {
    label: Type.String({ description: 'Class name' }),
    type: Type.Literal('segment'),
    geometry: Type.Object({ start_s: Type.Number(), end_s: Type.Number() }),
  },
  { title: 'SegmentAnnotation', description: 'Audio and video samples: a labelled time segment' },
);

export const CanonicalRecord = Type.Object(
  {
    id: Type.String({ description: '"image:<id>" or "sample:<id>": unique across modalities' }),
    modality: StringEnum(MODALITIES),
    split: Nullable(StringEnum(SPLIT_NAMES)),
    media: Nullable(Type.Union([FileMedia, ContentMedia], { description: 'The record\'s file (images, audio, video) or content (text `{text}`, tabular `{row}`, LLM `{prompt, response, …}`)' })),
    annotations: Type.Array(Type.Union([ImageAnnotation, SegmentAnnotation]), { description: 'Image annotations, or the time segments of audio and video samples; empty for other samples' }),
    label: Nullable(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'The record-level class (classification; every class of a multi-label sample), else null' })),
    spans: Nullable(Type.Array(Type.Object({ start: Type.Integer(), end: Type.Integer(), label: Type.String() }), { description: 'Character spans of text samples; null for other records' })),
    value: Type.Unknown({ description: 'A sample\'s value: a regression target (number), an audio transcript (string), an LLM rating and preference (object); null for images' }),
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'Images: original_name, review_state, created_at, image_id. Samples: their own metadata, then sample_id, review_state, created_at' }),
  },
  { title: 'CanonicalRecord', description: 'Versa\'s universal record schema (JSON Schema draft 2020-12 compatible)' },
);
export type CanonicalRecord = Static<typeof CanonicalRecord>;
