import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum } from '../../http/schemas.js';
import { AnnotationOut } from '../annotations/annotations.schemas.js';

/** More images than this run as a background job; fewer answer at once. */
export const INLINE_IMAGE_LIMIT = 8;

const ModelRef = Type.Union([Id, Type.String({ minLength: 1, maxLength: 200 })], {
  description: "A registered model's id (any project you can read) or its name in this project",
});

export const YoloRequest = Type.Object(
  {
    model: ModelRef,
    confidence: Type.Optional(Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'Detections scored lower are dropped. When absent: each class\'s threshold of a model promoted with them (`class_thresholds`), '
        + 'else 0.25',
    })),
    iou: Type.Number({ minimum: 0, maximum: 1, default: 0.45, description: 'Overlap above which NMS drops the lower-scored box of a class' }),
    image_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 100_000, description: 'Images of this project to run on; all when absent' })),
    only_unannotated: Type.Boolean({ default: false, description: 'Skip images that already have annotations' }),
    create_missing_classes: Type.Boolean({
      default: true,
      description: 'Create project classes for predicted class names the project lacks (needs classes.write); when false such detections are skipped',
    }),
  },
  { additionalProperties: false },
);
export type YoloRequest = Static<typeof YoloRequest>;

export const ImageAnnotationsOut = Type.Object({ image_id: Type.Integer(), annotations: Type.Array(AnnotationOut) });

export const LockedImageOut = Type.Object(
  { image_id: Type.Integer(), user_id: Type.Integer(), email: Type.String({ description: 'The holder' }), expires_at: Type.String() },
  { description: 'An image another user had locked for editing: nothing was written to it' },
);
export type LockedImageOut = Static<typeof LockedImageOut>;

export const YoloResultOut = Type.Object({
  created: Type.Integer({ description: 'Suggestions created (status `suggested`; accept or reject them)' }),
  replaced: Type.Integer({ description: "This model's earlier open suggestions on these images, deleted and replaced by this run" }),
  matched: Type.Integer({ description: 'Detections left out because an accepted annotation of the same class already covers them (box IoU ≥ 0.5)' }),
  skipped: Type.Integer({ description: 'Detections dropped: class not in the project (with create_missing_classes false), a class whose skeleton has another point count, a class for an image of a single-label project that already has one (issue 30), or nothing to store (no area inside the image; no keypoint labelled)' }),
  classes_created: Type.Array(Type.String()),
  images: Type.Array(ImageAnnotationsOut, { description: 'The images written to (locked ones are left out)' }),
  locked: Type.Array(LockedImageOut, { description: 'Images skipped because another user holds their editing lock' }),
});
export type YoloResultOut = Static<typeof YoloResultOut>;

export const JobStartedOut = Type.Object({
  job_id: Type.Integer(),
  name: Type.String(),
  status: StringEnum(['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  progress: Type.Number(),
  image_count: Type.Integer(),
  url: Type.String({ description: 'Follow the job here' }),
});
export type JobStartedOut = Static<typeof JobStartedOut>;

/** `[x, y]`: an array of exactly two numbers (OpenAPI 3.0 has no tuple form; `items` must be one schema). */
const Point = Type.Array(Type.Number({ minimum: 0 }), { minItems: 2, maxItems: 2, description: '[x, y]' });

export const SamRequest = Type.Object(
  {
    image_id: Id,
    class_id: Type.Optional(Id),
    points: Type.Optional(Type.Array(Point, { minItems: 1, maxItems: 64, description: '`[[x, y], …]` in image pixels (EXIF orientation applied); needed unless `box` is given' })),
    labels: Type.Optional(Type.Array(Type.Union([Type.Literal(0), Type.Literal(1)]), { minItems: 1, maxItems: 64, description: 'Per point: 1 include, 0 exclude' })),
    box: Type.Optional(Type.Object(
      { x: Type.Number({ minimum: 0 }), y: Type.Number({ minimum: 0 }), width: Type.Number({ minimum: 1 }), height: Type.Number({ minimum: 1 }) },
      { additionalProperties: false, description: "A box around the object, in image pixels: SAM's decoder reads its corners as two points labelled 2 and 3; points may refine it" },
    )),
    preview: Type.Boolean({ default: false, description: 'Return the mask without saving an annotation (class_id not needed)' }),
    annotation_type: StringEnum(['polygon', 'mask'] as const, {
      default: 'polygon',
      description: 'What to save: the largest outer polygon of the mask (editable, no holes), or the exact mask as RLE',
    }),
    encoder_model: Type.Optional(ModelRef),
    decoder_model: Type.Optional(ModelRef),
  },
  { additionalProperties: false },
);
export type SamRequest = Static<typeof SamRequest>;

const Box = Type.Object({ x: Type.Number(), y: Type.Number(), width: Type.Number(), height: Type.Number() });

export const SamOut = Type.Object({
  image_id: Type.Integer(),
  mask: Type.Object({
    rle: Type.Object({ size: Type.Array(Type.Integer()), counts: Type.Array(Type.Integer()) }, { description: 'COCO uncompressed RLE, column-major, [height, width]' }),
    polygons: Type.Array(Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[x, y]' })), { description: 'Outer boundaries, largest first' }),
    bbox: Box,
    area: Type.Integer(),
    score: Type.Number({ description: "The decoder's predicted IoU" }),
  }),
  annotation: Nullable(AnnotationOut),
  embedding_cached: Type.Boolean({ description: 'The image embedding came from the cache (only the decoder ran)' }),
});
export type SamOut = Static<typeof SamOut>;

export const PrecomputeRequest = Type.Object(
  { encoder_model: Type.Optional(ModelRef) },
  { additionalProperties: false },
);
export type PrecomputeRequest = Static<typeof PrecomputeRequest>;
