import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { AnnotationsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { ANNOTATION_TYPES, type AnnotationType as AnnotationTypeName } from '../../imaging/geometry.js';

export const AnnotationType = StringEnum(ANNOTATION_TYPES);

export const ANNOTATION_STATUSES = ['accepted', 'suggested'] as const;
export type AnnotationStatus = (typeof ANNOTATION_STATUSES)[number];
export const AnnotationStatusSchema = StringEnum(ANNOTATION_STATUSES, {
  description: '`accepted`: drawn or accepted by a person. `suggested`: model output awaiting a person\'s accept or reject; '
    + 'exports and versions leave suggestions out unless asked (`include_predictions`).',
});

export const SOURCE_PATTERN = '^(manual|yolo|sam|import|model:[A-Za-z0-9._-]{1,100})$';

const GEOMETRY_DESCRIPTION = [
  'In pixels of the original image (as displayed, EXIF orientation applied), origin top-left. By `annotation_type`:',
  '- `bbox`: `{x, y, width, height}`, width and height > 0. A box reaching past the image is cut to it; one with no area inside is 422.',
  '- `polygon`: `{points: [[x, y], ...]}`, at least 3 points enclosing some area. A polygon reaching past the image is clipped to it (it may gain vertices on the border); one with no area inside is 422.',
  '- `mask`: `{rle: {size: [height, width], counts: [...]}}`, COCO uncompressed RLE in column-major order starting with background; `size` must be the image size, `counts` must sum to height × width and mark at least one pixel. Answers add the computed `bbox`; a `bbox` sent in a request is ignored.',
  '- `classification`: `{}`; the class is the label.',
  'Other members of the geometry are not stored.',
].join('\n');

const Geometry = Type.Object({}, { additionalProperties: true, description: GEOMETRY_DESCRIPTION });

export const AnnotationCreate = Type.Object(
  {
    class_id: Id,
    annotation_type: AnnotationType,
    geometry: Geometry,
    confidence: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'null for manual annotations' }))),
    source: Type.Optional(
      Type.String({
        pattern: SOURCE_PATTERN,
        default: 'manual',
        description: '`manual` (default), `yolo`, `sam`, `import` or `model:<id>`',
      }),
    ),
    status: Type.Optional(AnnotationStatusSchema),
  },
  { additionalProperties: false },
);
export type AnnotationCreate = Static<typeof AnnotationCreate>;

export const AnnotationOut = Type.Object({
  id: Type.Integer(),
  image_id: Type.Integer(),
  class_id: Type.Integer(),
  annotation_type: AnnotationType,
  geometry: Geometry,
  confidence: Nullable(Type.Number()),
  source: Type.String(),
  status: AnnotationStatusSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type AnnotationOut = Static<typeof AnnotationOut>;

export const ImageParams = Type.Object({ image_id: Id });

export type AnnotationRow = Selectable<AnnotationsTable>;

export function toAnnotationOut(row: AnnotationRow): AnnotationOut {
  return {
    id: row.id,
    image_id: row.image_id,
    class_id: row.class_id,
    annotation_type: row.annotation_type as AnnotationTypeName,
    geometry: JSON.parse(row.geometry),
    confidence: row.confidence,
    source: row.source,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export const PredictionsFilter = Type.Object(
  {
    source: Type.Optional(Type.String({ pattern: SOURCE_PATTERN, description: "Only this source's suggestions (e.g. `model:3`); default all" })),
  },
  { additionalProperties: false },
);
export type PredictionsFilter = Static<typeof PredictionsFilter>;

export const PredictionsDecisionOut = Type.Object({
  image_id: Type.Integer(),
  /** How many suggestions were accepted (or rejected and deleted). */
  count: Type.Integer(),
  /** The accepted annotations (empty for a reject). */
  annotations: Type.Array(AnnotationOut),
});
export type PredictionsDecisionOut = Static<typeof PredictionsDecisionOut>;

/** The JSON text a revision stores for an annotation's state (geometry is already JSON text in the row). */
export function stateText(row: { class_id: number; annotation_type: string; geometry: string; confidence: number | null; source: string; status?: string }): string {
  const status = row.status === undefined ? '' : `,"status":${JSON.stringify(row.status)}`;
  return `{"class_id":${row.class_id},"annotation_type":${JSON.stringify(row.annotation_type)},"geometry":${row.geometry},"confidence":${JSON.stringify(row.confidence)},"source":${JSON.stringify(row.source)}${status}}`;
}
