import { Type, type Static } from 'typebox';
import { PageQuery } from '../../http/pagination.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { REVIEW_STATES } from '../../lib/vocabulary.js';
import { Split } from '../images/images.schemas.js';

export const MODALITIES = ['text', 'tabular', 'audio', 'video', 'llm'] as const;
export type Modality = (typeof MODALITIES)[number];
export const Modality = StringEnum(MODALITIES);
export const MEDIA_MODALITIES = ['audio', 'video'] as const;
export const COLUMN_TYPES = ['integer', 'number', 'boolean', 'category', 'text', 'date'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** Class names are the project's classes (created on import when new). */
const ClassName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
export const Label = Nullable(Type.Union([ClassName, Type.Array(ClassName, { minItems: 1, maxItems: 100 })], {
  description: 'A class name, or several for multi-label samples',
}));

export const TextSpan = Type.Object({
  start: Type.Integer({ minimum: 0, description: 'UTF-16 code unit offset into data.text (as JavaScript counts)' }),
  end: Type.Integer({ minimum: 1 }),
  label: ClassName,
});
export const TimeSegment = Type.Object({
  start_s: Type.Number({ minimum: 0 }),
  end_s: Type.Number({ minimum: 0 }),
  label: ClassName,
});
// No `additionalProperties: false` on the span shapes: Fastify's validator would strip one member's fields while
// trying the other member of the union. The service keeps only the fields of the sample's kind of span.
export const Spans = Nullable(Type.Array(Type.Union([TextSpan, TimeSegment]), {
  maxItems: 10_000,
  description: 'Text: character spans `{start, end, label}`; audio and video: time segments `{start_s, end_s, label}`',
}));
export type TextSpan = Static<typeof TextSpan>;
export type TimeSegment = Static<typeof TimeSegment>;

export const LlmValue = Type.Object({
  rating: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  preference: Type.Optional(StringEnum(['chosen', 'rejected', 'tie'] as const, { description: 'Which response the annotator prefers' })),
});
export const Value = Nullable(Type.Union([Type.Number(), Type.String({ maxLength: 100_000 }), LlmValue], {
  description: 'Tabular regression target (number), audio transcript (string), LLM rating/preference (object)',
}));
export type SampleValue = Static<typeof Value>;

const Data = Type.Record(Type.String(), Type.Unknown(), {
  description: 'text `{text}`; tabular `{row}`; audio/video `{file, file_url, mime_type, size_bytes, duration_s, sample_rate?, fps?}`; '
    + 'llm `{prompt, response?, chosen?, rejected?, messages?}`',
});

export const SampleOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  modality: Modality,
  split: Nullable(Split),
  data: Data,
  label: Label,
  spans: Spans,
  value: Value,
  metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
  review_state: StringEnum(REVIEW_STATES, { description: 'As for images: `pending` once submitted, then the decision' }),
  assignee_id: Nullable(Type.Integer({ description: 'The member the sample is assigned to' })),
  review_comment: Nullable(Type.String({ description: "The last review decision's comment" })),
  reviewed_by: Nullable(Type.Integer({ description: 'Who made the last review decision' })),
  reviewed_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type SampleOut = Static<typeof SampleOut>;

const Metadata = Type.Record(Type.String(), Type.Unknown());
export const SampleCreate = Type.Object({
  modality: StringEnum(['text', 'tabular', 'llm'] as const, { description: 'Media samples come through `import/jsonl`' }),
  data: Data,
  label: Type.Optional(Label),
  spans: Type.Optional(Spans),
  value: Type.Optional(Value),
  split: Type.Optional(Nullable(Split)),
  metadata: Type.Optional(Nullable(Metadata)),
});
export type SampleCreate = Static<typeof SampleCreate>;
export const SampleCreateBody = Type.Union([
  SampleCreate,
  // No `additionalProperties: false` in the union's members: Fastify's validator would strip one member's fields while trying the other.
  Type.Object({ items: Type.Array(SampleCreate, { minItems: 1, maxItems: 10_000 }) }),
]);
export type SampleCreateBody = Static<typeof SampleCreateBody>;
export const SampleCreateManyOut = Type.Object({ created: Type.Integer(), items: Type.Array(SampleOut) });

export const SampleUpdate = Type.Object({
  label: Type.Optional(Label),
  spans: Type.Optional(Spans),
  value: Type.Optional(Value),
  split: Type.Optional(Nullable(Split)),
}, { additionalProperties: false, minProperties: 1 });
export type SampleUpdate = Static<typeof SampleUpdate>;

export const SampleParams = Type.Object({ sample_id: Id });
export const SampleTargetOut = Type.Object({
  column: Nullable(Type.String({ description: 'The target column the tabular import named; null when the samples were created without one' })),
  task: Nullable(StringEnum(['classification', 'regression'] as const, { description: 'regression: the target is a number (`value`); classification: a class (`label`); null: no tabular samples' })),
});
export type SampleTargetOut = Static<typeof SampleTargetOut>;

export const SampleListQuery = Type.Object({
  ...PageQuery.properties,
  modality: Type.Optional(Modality),
  split: Type.Optional(Split),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Samples with this class (any of a multi-label sample\'s)' })),
  assignee: Type.Optional(Type.String({ pattern: '^(me|none|[1-9][0-9]{0,9})$', description: 'Samples assigned to this user id, to `me`, or to nobody (`none`)' })),
  review_state: Type.Optional(StringEnum(REVIEW_STATES)),
});
export type SampleListQuery = Static<typeof SampleListQuery>;

export const ImportOut = Type.Object({
  created: Type.Integer(),
  modality: Modality,
  columns: Type.Optional(Type.Record(Type.String(), StringEnum(COLUMN_TYPES), { description: 'Tabular: inferred column types' })),
  target: Type.Optional(Type.String()),
  task: Type.Optional(StringEnum(['classification', 'regression'] as const)),
  classes: Type.Optional(Type.Array(Type.String(), { description: 'Class names the import used (new ones were created)' })),
});
export type ImportOut = Static<typeof ImportOut>;

/** Documents the multipart bodies; the routes read the parts as a stream. */
const FilePart = Type.Unsafe<unknown>({ type: 'string', format: 'binary' });
export const TextImportBody = Type.Object({
  file: FilePart,
  text_field: Type.Optional(Type.String({ default: 'text' })),
  label_field: Type.Optional(Type.String({ default: 'label' })),
  spans_field: Type.Optional(Type.String({ default: 'spans', description: '`entities` ([[start, end, label]]) is read too' })),
});
export const TabularImportBody = Type.Object({
  file: FilePart,
  target: Type.String({ description: 'The label column' }),
  task: Type.Optional(StringEnum(['classification', 'regression'] as const, { description: 'Default: inferred from the target column' })),
});
export const JsonlImportBody = Type.Object({ file: FilePart, modality: StringEnum(['audio', 'video', 'llm'] as const) });

export const SampleSplitsBody = Type.Object({
  train: Type.Integer({ minimum: 0, maximum: 100 }),
  valid: Type.Integer({ minimum: 0, maximum: 100 }),
  test: Type.Integer({ minimum: 0, maximum: 100 }),
  strategy: Type.Optional(StringEnum(['random', 'stratified'] as const, { default: 'stratified' })),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 42 })),
  modality: Type.Optional(Modality),
}, { additionalProperties: false });
export type SampleSplitsBody = Static<typeof SampleSplitsBody>;
export const SampleSplitsOut = Type.Object({
  train: Type.Integer(),
  valid: Type.Integer(),
  test: Type.Integer(),
  strategy: Type.String(),
  seed: Type.Integer(),
});

export const AdapterPrepareBody = Type.Object({
  adapter: StringEnum(['tabular', 'hub'] as const),
  version_id: Type.Optional(Id),
  modality: Type.Optional(Modality),
}, { additionalProperties: false });
export type AdapterPrepareBody = Static<typeof AdapterPrepareBody>;
export const AdapterPrepareOut = Type.Object({
  adapter: Type.String(),
  files: Type.Array(Type.Object({ name: Type.String(), url: Type.String(), size_bytes: Type.Integer() })),
});
export type AdapterPrepareOut = Static<typeof AdapterPrepareOut>;

export const SampleLockOut = Type.Object({
  sample_id: Type.Integer(),
  user_id: Type.Integer(),
  email: Type.String(),
  acquired_at: Timestamp,
  expires_at: Timestamp,
});
export type SampleLockOut = Static<typeof SampleLockOut>;

export const SampleRevisionOut = Type.Object({
  id: Type.Integer(),
  sample_id: Type.Integer(),
  action: Type.String(),
  before: Nullable(Type.Record(Type.String(), Type.Unknown())),
  after: Nullable(Type.Record(Type.String(), Type.Unknown())),
  user_id: Nullable(Type.Integer()),
  created_at: Timestamp,
});
export type SampleRevisionOut = Static<typeof SampleRevisionOut>;

export const SampleAssignBody = Type.Object({
  user_id: Type.Union([Id, Type.Null()], { description: 'A member who can annotate; null withdraws the assignment of `sample_ids`' }),
  sample_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 10_000, description: 'These samples of the project' })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Or this many unassigned samples, oldest first' })),
  modality: Type.Optional(StringEnum(MODALITIES, { description: 'With count: samples of this modality only' })),
  only_unassigned: Type.Optional(Type.Boolean({ default: false, description: 'With sample_ids: leave samples that already have an assignee as they are' })),
}, { additionalProperties: false, description: 'Send exactly one of sample_ids and count. A sample has one assignee: assigning it again moves it.' });
export type SampleAssignBody = Static<typeof SampleAssignBody>;
export const SampleAssignOut = Type.Object({
  user_id: Nullable(Type.Integer()),
  sample_ids: Type.Array(Type.Integer(), { description: 'The samples whose assignee this request set' }),
});
export type SampleAssignOut = Static<typeof SampleAssignOut>;

export const SampleFramesBody = Type.Object({
  project_id: Id,
  step: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1, description: 'Decode every Nth frame of the clip (1: every frame)' })),
  start_s: Type.Optional(Type.Number({ minimum: 0, maximum: 1e7, description: 'Start of the clip, seconds from the video\'s start (default 0)' })),
  end_s: Type.Optional(Type.Number({ minimum: 0, maximum: 1e7, description: 'End of the clip (excluded), seconds (default: the video\'s end)' })),
}, { additionalProperties: false });
export type SampleFramesBody = Static<typeof SampleFramesBody>;

export const SegmentClasses = Type.Object({
  matched: Type.Array(Type.String(), { description: 'Segment labels that are classes of the target project: their frames get a classification' }),
  missing: Type.Array(Type.String(), { description: 'Segment labels with no class of that name in the target project: left out' }),
});
export type SegmentClasses = Static<typeof SegmentClasses>;

export const SampleFramesOut = Type.Object({
  video_id: Type.Integer({ description: 'The video made in the target project (GET /api/videos/{id})' }),
  job_id: Type.Integer({ description: 'The decoding job (GET /api/jobs/{id}); its result says `frames`, `classified` and `segment_classes`' }),
  project_id: Type.Integer(),
  sample_id: Type.Integer(),
  step: Type.Integer(),
  range_start_s: Nullable(Type.Number()),
  range_end_s: Nullable(Type.Number()),
  expected_frames: Type.Integer({ description: 'About how many frames the clip becomes (its length × rate ÷ step)' }),
  segment_classes: SegmentClasses,
});
export type SampleFramesOut = Static<typeof SampleFramesOut>;
