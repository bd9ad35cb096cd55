import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { AssignmentsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { REVIEW_STATES } from '../../lib/vocabulary.js';

export const AssignmentCreate = Type.Object(
  {
    user_id: Id,
    image_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 10_000, description: 'These images of the project' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Or a share of the unlabelled queue: this many unassigned images without annotations, oldest first' })),
  },
  { additionalProperties: false, description: 'Send exactly one of image_ids and count. An image has one assignee: assigning it again moves it.' },
);
export type AssignmentCreate = Static<typeof AssignmentCreate>;

export const AssignmentOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  image_id: Type.Integer(),
  user_id: Type.Integer(),
  assigned_by: Nullable(Type.Integer()),
  created_at: Timestamp,
});
export type AssignmentOut = Static<typeof AssignmentOut>;

export const AssignmentListQuery = Type.Object({ user_id: Type.Optional(Id) });

export const ProgressOut = Type.Object({
  user_id: Type.Integer(),
  email: Type.String(),
  display_name: Type.String(),
  assigned: Type.Integer({ description: 'Images assigned' }),
  annotated: Type.Integer({ description: 'Of those, images with at least one annotation' }),
  pending: Type.Integer({ description: 'Of those, images waiting for review' }),
  approved: Type.Integer(),
  returned: Type.Integer({ description: 'Of those, images rejected or sent back for changes' }),
});
export type ProgressOut = Static<typeof ProgressOut>;

export const QueueItemOut = Type.Object({
  project_id: Type.Integer(),
  image_id: Type.Integer(),
  reason: StringEnum(['assigned', 'returned'] as const, { description: 'returned: a review of your submission was rejected or asked for changes' }),
  assignment_id: Nullable(Type.Integer()),
  review_state: StringEnum(REVIEW_STATES),
  annotation_count: Type.Integer(),
  review_comment: Nullable(Type.String({ description: "The reviewer's comment when returned" })),
});
export type QueueItemOut = Static<typeof QueueItemOut>;

export type AssignmentRow = Selectable<AssignmentsTable>;

export function toAssignmentOut(row: AssignmentRow): AssignmentOut {
  return { id: row.id, project_id: row.project_id, image_id: row.image_id, user_id: row.user_id, assigned_by: row.assigned_by, created_at: row.created_at };
}
