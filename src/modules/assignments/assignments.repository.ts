import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { PreparedQuery } from '../../db/prepared-query.js';
import type { AssignmentRow, ProgressOut, QueueItemOut } from './assignments.schemas.js';

export class AssignmentsRepository {
  private readonly assigned: PreparedQuery<{ imageId: number; userId: number }, { id: number }>;
  private readonly dealt: PreparedQuery<{ imageId: number; userId: number }, { id: number }>;

  constructor(private readonly db: Db) {
    this.assigned = new PreparedQuery(db, ['imageId', 'userId'], (p) =>
      db.selectFrom('assignments').select('id').where('image_id', '=', p.imageId).where('user_id', '=', p.userId),
    );
    this.dealt = new PreparedQuery(db, ['imageId', 'userId'], (p) =>
      db.selectFrom('qc_tasks').select('id').where('image_id', '=', p.imageId).where('user_id', '=', p.userId),
    );
  }

  /**
   * Whether the image is the user's to see and edit: assigned to them, or dealt to them as a quality control task
   * (issue 29; overlap and ground-truth images alike, so access tells nothing about which is which).
   */
  async isAssigned(imageId: number, userId: number): Promise<boolean> {
    if ((await this.assigned.run({ imageId, userId })).rows.length > 0) return true;
    return (await this.dealt.run({ imageId, userId })).rows.length > 0;
  }

  /** Which of the ids are images of the project. */
  async imagesInProject(projectId: number, imageIds: number[]): Promise<Set<number>> {
    const found = new Set<number>();
    for (let i = 0; i < imageIds.length; i += 500) {
      const rows = await this.db.selectFrom('images').select('id').where('project_id', '=', projectId).where('id', 'in', imageIds.slice(i, i + 500)).execute();
      for (const row of rows) found.add(row.id);
    }
    return found;
  }

  /** The oldest images of the project with no annotation and no assignee. */
  async unlabelledQueue(projectId: number, count: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('images')
      .select('images.id')
      .where('images.project_id', '=', projectId)
      .where('images.annotation_count', '=', 0)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('assignments').select('assignments.id').whereRef('assignments.image_id', '=', 'images.id'))))
      .orderBy('images.id')
      .limit(count)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Assigns the images to the user in one transaction (moving any that had another assignee). */
  assign(projectId: number, userId: number, imageIds: number[], assignedBy: number, now: string): Promise<AssignmentRow[]> {
    return this.db.transaction().execute(async (tx) => {
      const out: AssignmentRow[] = [];
      for (let i = 0; i < imageIds.length; i += 500) {
        const rows = await tx
          .insertInto('assignments')
          .values(imageIds.slice(i, i + 500).map((image_id) => ({ project_id: projectId, image_id, user_id: userId, assigned_by: assignedBy, created_at: now })))
          .onConflict((oc) =>
            oc.column('image_id').doUpdateSet((eb) => ({
              user_id: eb.ref('excluded.user_id'),
              assigned_by: eb.ref('excluded.assigned_by'),
              created_at: eb.ref('excluded.created_at'),
            })),
          )
          .returningAll()
          .execute();
        out.push(...rows);
      }
      return out.sort((a, b) => a.image_id - b.image_id);
    });
  }

  list(projectId: number, userId?: number): Promise<AssignmentRow[]> {
    let query = this.db.selectFrom('assignments').selectAll().where('project_id', '=', projectId);
    if (userId !== undefined) query = query.where('user_id', '=', userId);
    return query.orderBy('id').execute();
  }

  find(id: number) {
    return this.db
      .selectFrom('assignments')
      .innerJoin('projects', 'projects.id', 'assignments.project_id')
      .selectAll('assignments')
      .select('projects.owner_id')
      .where('assignments.id', '=', id)
      .executeTakeFirst();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('assignments').where('id', '=', id).execute();
  }

  /** Per assignee: how many images they hold and where those stand. */
  async progress(projectId: number): Promise<ProgressOut[]> {
    const count = (condition: ReturnType<typeof sql>) => sql<number>`sum(case when ${condition} then 1 else 0 end)`;
    const rows = await this.db
      .selectFrom('assignments')
      .innerJoin('images', 'images.id', 'assignments.image_id')
      .innerJoin('users', 'users.id', 'assignments.user_id')
      .select([
        'users.id as user_id',
        'users.email',
        'users.display_name',
        (eb) => eb.fn.countAll<number>().as('assigned'),
        count(sql`images.annotation_count > 0`).as('annotated'),
        count(sql`images.review_state = 'pending'`).as('pending'),
        count(sql`images.review_state = 'approved'`).as('approved'),
        count(sql`images.review_state in ('rejected', 'changes')`).as('returned'),
      ])
      .where('assignments.project_id', '=', projectId)
      .groupBy(['users.id', 'users.email', 'users.display_name'])
      .orderBy('users.id')
      .execute();
    return rows.map((r) => ({
      ...r,
      assigned: Number(r.assigned),
      annotated: Number(r.annotated),
      pending: Number(r.pending),
      approved: Number(r.approved),
      returned: Number(r.returned),
    }));
  }

  /**
   * The user's queue: their assigned images not yet approved or waiting, then images they submitted that came
   * back (rejected or changes requested) and are still in that state.
   */
  async queue(userId: number): Promise<QueueItemOut[]> {
    const assigned = await this.db
      .selectFrom('assignments')
      .innerJoin('images', 'images.id', 'assignments.image_id')
      .select(['assignments.project_id', 'assignments.image_id', 'assignments.id as assignment_id', 'images.review_state', 'images.annotation_count'])
      .where('assignments.user_id', '=', userId)
      .where('images.review_state', 'not in', ['pending', 'approved'])
      .orderBy('assignments.id')
      .execute();
    const returned = await this.db
      .selectFrom('reviews')
      .innerJoin('images', 'images.id', 'reviews.image_id')
      .select(['reviews.project_id', 'reviews.image_id', 'images.review_state', 'images.annotation_count', 'reviews.decision_comment', 'reviews.id'])
      .where('reviews.submitted_by', '=', userId)
      .where('reviews.status', 'in', ['rejected', 'changes'])
      .whereRef('images.review_state', '=', 'reviews.status')
      .orderBy('reviews.id', 'desc')
      .execute();
    const items: QueueItemOut[] = [];
    const seen = new Set<number>();
    // The latest returned review of an image carries the comment that matters.
    for (const r of returned) {
      if (seen.has(r.image_id)) continue;
      seen.add(r.image_id);
      const assignment = assigned.find((a) => a.image_id === r.image_id);
      items.push({
        project_id: r.project_id,
        image_id: r.image_id,
        reason: 'returned',
        assignment_id: assignment?.assignment_id ?? null,
        review_state: r.review_state,
        annotation_count: r.annotation_count,
        review_comment: r.decision_comment,
      });
    }
    for (const a of assigned) {
      if (seen.has(a.image_id)) continue;
      items.push({ ...a, reason: 'assigned', review_comment: null });
    }
    return items;
  }
}
