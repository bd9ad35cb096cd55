import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ClassesTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { ATTRIBUTE_TYPES } from '../../imaging/class-specs.js';

const ClassName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Unique within the project (case-sensitive, surrounding spaces trimmed)' });
const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: '`#rrggbb`; stored in lower case', examples: ['#4e79a7'] });

/** `[i, j]`: two point indices (an array, not a tuple: OpenAPI 3.0 has no tuples). */
const IndexPair = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2 });

const Skeleton = Type.Object(
  {
    points: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 1000, description: 'The point names, in the order keypoint annotations list their points' }),
    edges: Type.Optional(Type.Array(IndexPair, { maxItems: 4000, description: 'Lines drawn between points, as index pairs' })),
    flip_pairs: Type.Optional(Type.Array(IndexPair, {
      maxItems: 1000,
      description: 'Left/right pairs a horizontal flip swaps (e.g. left and right eye), as index pairs',
    })),
  },
  { additionalProperties: false, description: 'A keypoint skeleton: the template keypoint annotations of the class follow' },
);

const AttributeSpec = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    type: StringEnum(ATTRIBUTE_TYPES),
    values: Type.Optional(Type.Array(Type.Union([Type.String({ maxLength: 200 }), Type.Number()]), {
      maxItems: 1000,
      description: '`select`: its choices. `number`: `[min, max]` or `[min, max, step]`. Absent for `checkbox` and `text`',
    })),
    default: Type.Optional(Type.Union([Type.Boolean(), Type.Number(), Type.String({ maxLength: 2000 })])),
  },
  { additionalProperties: false },
);

/** The modalities a class may be for (as the profile names them). */
export const CLASS_MODALITIES = ['image', 'text', 'tabular', 'audio', 'video', 'llm'] as const;
const Modalities = Type.Array(StringEnum(CLASS_MODALITIES), {
  minItems: 1,
  maxItems: CLASS_MODALITIES.length,
  uniqueItems: true,
  description: 'The modalities the class is for: a sample page offers only the classes of its modality (null or absent: every modality)',
});

const Attributes = Type.Array(AttributeSpec, { maxItems: 100, description: "The attributes the class's annotations may carry (names distinct)" });

export const ClassCreate = Type.Object(
  { name: ClassName, color: Type.Optional(Color), skeleton: Type.Optional(Nullable(Skeleton)), attributes: Type.Optional(Attributes), modalities: Type.Optional(Nullable(Modalities)) },
  { additionalProperties: false, description: 'When `color` is omitted one is picked from a fixed palette by the class index.' },
);
export type ClassCreate = Static<typeof ClassCreate>;

export const ClassUpdate = Type.Object(
  {
    name: Type.Optional(ClassName),
    color: Type.Optional(Color),
    skeleton: Type.Optional(Type.Union([Skeleton, Type.Null()], { description: 'A new skeleton (null: none). Refused (409) when it changes the number of points keypoint annotations of the class hold' })),
    attributes: Type.Optional(Attributes),
    modalities: Type.Optional(Nullable(Modalities)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ClassUpdate = Static<typeof ClassUpdate>;

export const ClassOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  name: Type.String(),
  color: Type.String(),
  skeleton: Nullable(Skeleton),
  attributes: Attributes,
  modalities: Nullable(Modalities),
  created_at: Timestamp,
  annotation_count: Type.Optional(Type.Integer({ description: 'Annotations labelled with this class' })),
});
export type ClassOut = Static<typeof ClassOut>;

export const ClassParams = Type.Object({ class_id: Id });

export const ClassDeleteQuery = Type.Object({
  cascade: Type.Optional(Type.Boolean({ default: false, description: 'Also delete the annotations that use the class' })),
});

export const ClassDeletedOut = Type.Object(
  { deleted_annotations: Type.Integer() },
  { description: 'With `cascade=true`: the class is gone, with this many annotations' },
);

export const ClassInUseOut = Type.Object(
  {
    detail: Type.String(),
    annotation_count: Type.Optional(Type.Integer({ description: 'Annotations that use the class' })),
    locks: Type.Optional(Type.Array(Type.Object({ image_id: Type.Integer(), user_id: Type.Integer(), email: Type.String(), expires_at: Type.String() }), {
      description: 'With `cascade=true`: the images with such annotations that other users have locked',
    })),
  },
  { description: 'Annotations use the class and `cascade=true` was not given, or (cascading) images with its annotations are locked by other users; nothing was deleted' },
);

export type ClassRow = Selectable<ClassesTable>;

export function toClassOut(row: ClassRow, annotationCount?: number): ClassOut {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    color: row.color,
    skeleton: row.skeleton === null ? null : JSON.parse(row.skeleton),
    attributes: row.attributes === null ? [] : JSON.parse(row.attributes),
    modalities: row.modalities === null ? null : JSON.parse(row.modalities),
    created_at: row.created_at,
    ...(annotationCount === undefined ? {} : { annotation_count: annotationCount }),
  };
}
