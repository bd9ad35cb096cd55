import { sql, type Kysely, type SelectQueryBuilder, type UpdateQueryBuilder } from 'kysely';
import type { Db, Executor } from '../../db/database.js';

/**
 * The review step's storage (issue 29), one for images' and samples' tasks: the task table with its item column, the
 * decisions' table, and the task's columns a decision records (the version it was made on).
 */
export interface ReviewedTasks {
  tasks: 'qc_tasks' | 'qc_sample_tasks';
  reviews: 'qc_task_reviews' | 'qc_sample_task_reviews';
  key: 'image_id' | 'sample_id';
  version: readonly string[];
}

export const IMAGE_REVIEWS: ReviewedTasks = { tasks: 'qc_tasks', reviews: 'qc_task_reviews', key: 'image_id', version: ['shapes'] };
export const SAMPLE_REVIEWS: ReviewedTasks = { tasks: 'qc_sample_tasks', reviews: 'qc_sample_task_reviews', key: 'sample_id', version: ['label', 'labels', 'spans', 'value'] };

/** A page of tasks or decisions: by item, by annotator, after an id. */
export interface ReviewQuery { image_id?: number; sample_id?: number; user_id?: number; after?: number; limit: number }

/** What a decision writes. */
export interface ReviewValues { decision: 'accepted' | 'changes_requested'; comment: string; reviewed_by: number; created_at: string }

/** A task as the review step reads it: who, which item (`d.key`), where its review stands, its version's columns. */
export type ReviewedTaskRow = { id: number; project_id: number; user_id: number; review_round: number } & Record<string, unknown>;

/**
 * Submitted tasks waiting for review, oldest task first; the reviewer's own left out. `from` selects the tasks (with
 * what the reviewer is shown beside them, e.g. an image's size).
 */
export function pendingReviews<O>(from: SelectQueryBuilder<any, any, O>, d: ReviewedTasks, projectId: number, reviewerId: number, query: ReviewQuery): Promise<O[]> {
  const col = (c: string) => `${d.tasks}.${c}`;
  let q = (from as SelectQueryBuilder<any, any, O>)
    .where(col('project_id'), '=', projectId)
    .where(col('status'), '=', 'submitted')
    .where(col('review_state'), '=', 'pending')
    .where(col('user_id'), '!=', reviewerId);
  if (query[d.key] !== undefined) q = q.where(col(d.key), '=', query[d.key]);
  if (query.user_id !== undefined) q = q.where(col('user_id'), '=', query.user_id);
  if (query.after !== undefined) q = q.where(col('id'), '>', query.after);
  return q.orderBy(col('id')).limit(query.limit).execute();
}

/** Which tasks a decision moves: the task itself, or the tasks reviewed with it (a video's task set). */
export type ReviewScope = (update: UpdateQueryBuilder<any, any, any, any>, tx: Kysely<any>) => UpdateQueryBuilder<any, any, any, any>;

const theTask = (task: ReviewedTaskRow): ReviewScope => (update) => update.where('id', '=', task.id);

/**
 * Records a review of a pending submission and moves the task (every task of `scope`, in one conditional update):
 * accepted stays submitted; changes requested opens it again for its annotator, with the comment. One row records the
 * decision, on the task named. Undefined (nothing written) when nothing was pending — the conditional update is what
 * settles two reviewers deciding at once.
 */
export function decideReview(db: Db, d: ReviewedTasks, task: ReviewedTaskRow, values: ReviewValues, scope: ReviewScope = theTask(task)) {
  return db.transaction().execute(async (trx) => {
    const tx = trx as unknown as Kysely<any>;
    const round = Number(task.review_round) + 1;
    const update = tx
      .updateTable(d.tasks)
      .set({ review_state: values.decision, review_comment: values.comment === '' ? null : values.comment, review_round: sql`review_round + 1`, ...(values.decision === 'changes_requested' ? { status: 'open' } : {}) })
      .where('status', '=', 'submitted')
      .where('review_state', '=', 'pending');
    const moved = await scope(update, tx).executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) return undefined;
    const version = Object.fromEntries(d.version.map((c) => [c, task[c] ?? null]));
    return tx
      .insertInto(d.reviews)
      .values({ project_id: task.project_id, task_id: task.id, [d.key]: task[d.key], user_id: task.user_id, round, ...version, ...values })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** Decisions of the project, oldest first. */
export function taskReviews(db: Executor, d: ReviewedTasks, projectId: number, query: ReviewQuery) {
  let q = (db as unknown as Kysely<any>).selectFrom(d.reviews).selectAll().where('project_id', '=', projectId);
  if (query[d.key] !== undefined) q = q.where(d.key, '=', query[d.key]);
  if (query.user_id !== undefined) q = q.where('user_id', '=', query.user_id);
  if (query.after !== undefined) q = q.where('id', '>', query.after);
  return q.orderBy('id').limit(query.limit).execute();
}

/** Review outcomes per annotator (reviews a user decided on their own task left out, as for image reviews). */
export async function taskReviewCounts(db: Executor, d: ReviewedTasks, projectId: number): Promise<{ user_id: number; accepted: number; changes: number }[]> {
  const rows = await (db as unknown as Kysely<any>)
    .selectFrom(d.reviews)
    .select([
      'user_id',
      sql<number>`sum(case when decision = 'accepted' then 1 else 0 end)`.as('accepted'),
      sql<number>`sum(case when decision = 'changes_requested' then 1 else 0 end)`.as('changes'),
    ])
    .where('project_id', '=', projectId)
    .where((eb) => eb.or([eb('reviewed_by', 'is', null), eb('reviewed_by', '!=', eb.ref('user_id'))]))
    .groupBy('user_id')
    .execute();
  return rows.map((r) => ({ user_id: Number(r.user_id), accepted: Number(r.accepted), changes: Number(r.changes) }));
}
