import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ReviewsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { REVIEW_STATUSES } from '../../lib/vocabulary.js';

export const DECISIONS = ['approve', 'reject', 'changes'] as const;
export type Decision = (typeof DECISIONS)[number];

const Comment = Type.String({ maxLength: 5000 });

export const ReviewCreate = Type.Object({ image_id: Id, comment: Type.Optional(Comment) }, { additionalProperties: false });
export type ReviewCreate = Static<typeof ReviewCreate>;

export const ReviewBatchCreate = Type.Object(
  { image_ids: Type.Array(Id, { minItems: 1, maxItems: 1000 }), comment: Type.Optional(Comment) },
  { additionalProperties: false },
);
export type ReviewBatchCreate = Static<typeof ReviewBatchCreate>;

export const ReviewDecide = Type.Object(
  { decision: StringEnum(DECISIONS), comment: Type.Optional(Comment) },
  { additionalProperties: false, description: '`changes` needs a comment saying what to change' },
);
export type ReviewDecide = Static<typeof ReviewDecide>;

export const ReviewOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  image_id: Type.Integer(),
  status: StringEnum(REVIEW_STATUSES),
  comment: Type.String({ description: "The submitter's note" }),
  submitted_by: Nullable(Type.Integer()),
  decided_by: Nullable(Type.Integer({ description: 'Who decided' })),
  decided_at: Nullable(Timestamp),
  decision_comment: Type.String(),
  created_at: Timestamp,
});
export type ReviewOut = Static<typeof ReviewOut>;

export const ReviewListQuery = Type.Object({
  status: Type.Optional(StringEnum(REVIEW_STATUSES)),
  image_id: Type.Optional(Id),
  limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  after: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type ReviewListQuery = Static<typeof ReviewListQuery>;

export type ReviewRow = Selectable<ReviewsTable>;

export function toReviewOut(row: ReviewRow): ReviewOut {
  return {
    id: row.id,
    project_id: row.project_id,
    image_id: row.image_id,
    status: row.status,
    comment: row.comment,
    submitted_by: row.submitted_by,
    decided_by: row.decided_by,
    decided_at: row.decided_at,
    decision_comment: row.decision_comment,
    created_at: row.created_at,
  };
}
