import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { RevisionsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

/** The fields of an annotation a revision records before and after a change. */
export interface AnnotationState {
  class_id: number;
  annotation_type: string;
  geometry: object;
  confidence: number | null;
  source: string;
  /** Absent in revisions written before annotations had a status (they were all accepted). */
  status?: 'accepted' | 'suggested';
  /** Absent when the annotation had no attribute values or group (and in revisions written before either existed). */
  attributes?: Record<string, unknown>;
  group_id?: number;
}

const State = Type.Object(
  {
    class_id: Type.Integer(),
    annotation_type: Type.String(),
    geometry: Type.Object({}, { additionalProperties: true }),
    confidence: Nullable(Type.Number()),
    source: Type.String(),
    status: Type.Optional(StringEnum(['accepted', 'suggested'] as const, { description: '`suggested` while a model prediction awaited a decision' })),
    attributes: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Attribute values, when it had any' })),
    group_id: Type.Optional(Type.Integer({ description: 'Its group, when it was in one' })),
  },
  { description: 'The annotation as it was' },
);

export const RevisionOut = Type.Object({
  id: Type.Integer(),
  annotation_id: Type.Integer(),
  image_id: Type.Integer(),
  action: StringEnum(['create', 'update', 'delete', 'revert'] as const, { description: '`revert` is a change made by reverting to an earlier revision' }),
  before: Type.Union([State, Type.Null()], { description: 'null when the annotation did not exist before' }),
  after: Type.Union([State, Type.Null()], { description: 'null when the change deleted it' }),
  user_id: Nullable(Type.Integer()),
  created_at: Timestamp,
});
export type RevisionOut = Static<typeof RevisionOut>;

export const RevertBody = Type.Object(
  { revision_id: Id },
  { additionalProperties: false, description: "Restore the annotation to its state right after that revision (a revision of another annotation is 404)" },
);

export type RevisionRow = Selectable<RevisionsTable>;

export function toRevisionOut(row: RevisionRow): RevisionOut {
  return {
    id: row.id,
    annotation_id: row.annotation_id,
    image_id: row.image_id,
    action: row.action,
    before: row.before === null ? null : JSON.parse(row.before),
    after: row.after === null ? null : JSON.parse(row.after),
    user_id: row.user_id,
    created_at: row.created_at,
  };
}

export { stateText } from '../annotations/annotations.schemas.js';
