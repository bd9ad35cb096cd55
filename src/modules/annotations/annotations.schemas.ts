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
  '- `bbox` may carry `rotation`: degrees clockwise about the box centre, [0, 360); `x, y, width, height` are the box before rotation (CVAT\'s convention). A rotated box is kept whole when its centre is on the image (422 otherwise).',
  '- `polygon` may carry `parts: [[[x, y], ...], ...]` for one object made of several polygons (`points` is then the first part) and `holes`. Parts and holes with nothing inside the image are dropped.',
  '- `classification`: `{}`; the class is the label.',
  '- `keypoints`: `{points: [[x, y, v], ...], bbox?}` in the order of the class\'s skeleton points (as many as it names); `v` as COCO: 0 not labelled (stored as [0, 0, 0]), 1 labelled but not visible, 2 visible. Labelled points must lie on the image (within a pixel of its border they are moved onto it).',
  '- `polyline`: `{points: [[x, y], ...]}`, at least 2 points, an open path. `points`: `{points: [[x, y], ...]}`, at least 1. Points must lie on the image.',
  '- `ellipse`: `{cx, cy, rx, ry, rotation}`: radii > 0, centre on the image, rotation in degrees clockwise.',
  'Other members of the geometry are not stored.',
].join('\n');

export const Geometry = Type.Object({}, { additionalProperties: true, description: GEOMETRY_DESCRIPTION });

export const Attributes = Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.Boolean(), Type.Number(), Type.String({ maxLength: 2000 })]), {
  description: "Attribute values `{name: value}`, each declared by the class's `attributes` specs (checkbox: boolean, select: one of its values, number: within its range, text: a string); an attribute left out holds its default",
});
const GroupId = Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, description: 'Shapes of one image with the same group id are one object (CVAT groups)' });

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
    attributes: Type.Optional(Attributes),
    group_id: Type.Optional(Nullable(GroupId)),
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
  attributes: Attributes,
  group_id: Nullable(GroupId),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type AnnotationOut = Static<typeof AnnotationOut>;

/** An item of a frame's annotation list: an annotation, or a track's shape on that frame (issue 26). */
export const ImageAnnotationOut = Type.Object({
  ...AnnotationOut.properties,
  id: Type.Integer({ description: "An annotation's id; for a track's shape the track's id negated (it is no annotation: edit it through `/api/tracks/{track_id}`)" }),
  track_id: Type.Optional(Type.Integer({ description: 'Set on a track\'s shape: the track it belongs to' })),
  interpolated: Type.Optional(Type.Boolean({ description: "Set on a track's shape: false on a keyframe, true when computed from the keyframes around it" })),
  occluded: Type.Optional(Type.Boolean({ description: "Set on a track's shape: the keyframe's occluded flag" })),
});
export type ImageAnnotationOut = Static<typeof ImageAnnotationOut>;

/** A track's shape on one frame, as the tracks module computes it. */
export interface FrameTrackShape {
  track_id: number;
  class_id: number;
  annotation_type: string;
  geometry: Record<string, unknown>;
  attributes: Record<string, unknown>;
  occluded: boolean;
  interpolated: boolean;
  created_at: string;
  updated_at: string;
}

/** The shapes of the tracks on the frame an image is (none for an image that is no frame). */
export type FrameShapes = (imageId: number) => Promise<FrameTrackShape[]>;

export function trackShapeOut(imageId: number, shape: FrameTrackShape): ImageAnnotationOut {
  return {
    id: -shape.track_id,
    image_id: imageId,
    class_id: shape.class_id,
    annotation_type: shape.annotation_type as AnnotationTypeName,
    geometry: shape.geometry,
    confidence: null,
    source: 'track',
    status: 'accepted',
    attributes: shape.attributes as AnnotationOut['attributes'],
    group_id: null,
    created_at: shape.created_at,
    updated_at: shape.updated_at,
    track_id: shape.track_id,
    interpolated: shape.interpolated,
    occluded: shape.occluded,
  };
}

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
    attributes: row.attributes === null ? {} : JSON.parse(row.attributes),
    group_id: row.group_id,
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
export function stateText(row: {
  class_id: number; annotation_type: string; geometry: string; confidence: number | null; source: string; status?: string; attributes?: string | null; group_id?: number | null;
}): string {
  const status = row.status === undefined ? '' : `,"status":${JSON.stringify(row.status)}`;
  const attributes = row.attributes == null ? '' : `,"attributes":${row.attributes}`;
  const group = row.group_id == null ? '' : `,"group_id":${row.group_id}`;
  return `{"class_id":${row.class_id},"annotation_type":${JSON.stringify(row.annotation_type)},"geometry":${row.geometry},"confidence":${JSON.stringify(row.confidence)},"source":${JSON.stringify(row.source)}${status}${attributes}${group}}`;
}
