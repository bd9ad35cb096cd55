import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { ReviewState } from '../../db/schema.js';
import type { ReviewListQuery, ReviewRow } from './reviews.schemas.js';

export class ReviewsRepository {
  constructor(private readonly db: Db) {}

  /** The ids among `imageIds` that are images of the project. */
  async imagesInProject(projectId: number, imageIds: number[]): Promise<Set<number>> {
    const rows = await this.db.selectFrom('images').select('id').where('project_id', '=', projectId).where('id', 'in', imageIds).execute();
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Opens a pending review for each image and marks the images pending, in one transaction. Images already pending
   * are refused as a whole (null): the state change is the guard, so concurrent submissions cannot both pass.
   */
  submit(projectId: number, imageIds: number[], userId: number, comment: string, now: string): Promise<ReviewRow[] | null> {
    return this.db
      .transaction()
      .execute(async (tx) => {
        const moved = await tx
          .updateTable('images')
          .set({ review_state: 'pending' })
          .where('project_id', '=', projectId)
          .where('id', 'in', imageIds)
          .where('review_state', '!=', 'pending')
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) !== imageIds.length) throw new AlreadyPending();
        return tx
          .insertInto('reviews')
          .values(imageIds.map((image_id) => ({ project_id: projectId, image_id, submitted_by: userId, comment, status: 'pending' as const, created_at: now })))
          .returningAll()
          .execute();
      })
      .then((rows) => rows.sort((a, b) => a.id - b.id))
      .catch((err: unknown) => {
        if (err instanceof AlreadyPending || isUniqueViolation(err)) return null;
        throw err;
      });
  }

  find(id: number) {
    return this.db
      .selectFrom('reviews')
      .innerJoin('projects', 'projects.id', 'reviews.project_id')
      .selectAll('reviews')
      .select('projects.owner_id')
      .where('reviews.id', '=', id)
      .executeTakeFirst();
  }

  /** Records a decision on a pending review and the image's new state; undefined when it was no longer pending. */
  decide(id: number, status: Exclude<ReviewState, 'unreviewed' | 'pending'>, userId: number, comment: string, now: string): Promise<ReviewRow | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('reviews')
        .set({ status, decided_by: userId, decided_at: now, decision_comment: comment })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (row) await tx.updateTable('images').set({ review_state: status }).where('id', '=', row.image_id).execute();
      return row;
    });
  }

  list(projectId: number, query: ReviewListQuery): Promise<ReviewRow[]> {
    let q = this.db.selectFrom('reviews').selectAll().where('project_id', '=', projectId);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.image_id) q = q.where('image_id', '=', query.image_id);
    if (query.after !== undefined) q = q.where('id', '>', query.after);
    return q.orderBy('id').limit(query.limit).execute();
  }
}

class AlreadyPending extends Error {}
