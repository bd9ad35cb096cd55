import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { MODALITIES } from '../profile/profile.schemas.js';

export const CanonicalQuery = Type.Object({
  format: Type.Optional(StringEnum(['jsonl', 'json'] as const, { default: 'jsonl', description: 'jsonl: one record per line (application/x-ndjson); json: one array document' })),
  split: Type.Optional(StringEnum(['train', 'valid', 'test'] as const)),
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
    type: Type.String({ description: 'bbox (rotated when its geometry has `rotation`) | polygon (with `parts` and `holes` for an object of several polygons) | mask | classification | keypoints | polyline | points | ellipse' }),
    geometry: Type.Unknown({ description: 'In pixels of the original image, as in AnnotationOut; keypoints in the order of the class\'s skeleton points (GET /api/projects/{id}/classes)' }),
    confidence: Nullable(Type.Number()),
    source: Type.String(),
    status: StringEnum(['accepted', 'suggested'] as const, { description: 'suggested: model output no person has accepted yet' }),
    attributes: Type.Record(Type.String(), Type.Unknown(), { description: 'Attribute values `{name: value}` as in AnnotationOut (the class\'s specs: GET /api/projects/{id}/classes)' }),
    group_id: Nullable(Type.Integer({ description: 'Annotations of one image with the same group_id belong to one object (CVAT groups)' })),
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
    split: Nullable(StringEnum(['train', 'valid', 'test'] as const)),
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
