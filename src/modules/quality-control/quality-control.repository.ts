import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import type { Db, Executor, Tx } from '../../db/database.js';
import { lockQualityDealing } from '../../db/write-locks.js';
import { IMAGE_QUEUE, settleQueue, topUpQueue } from './overlap-queue.repository.js';
import { decideReview, IMAGE_REVIEWS, pendingReviews, taskReviewCounts, taskReviews, type ReviewQuery, type ReviewScope, type ReviewValues } from './task-reviews.repository.js';
import type { Database, QcDecisionsTable, QcSettingsTable, QcTaskReviewsTable, QcTasksTable } from '../../db/schema.js';

export type TaskRow = Selectable<QcTasksTable> & { width: number; height: number; video_id: number | null; frame: number | null };
export type DecisionRow = Selectable<QcDecisionsTable>;
export type SettingsRow = Selectable<QcSettingsTable>;
export type TaskReviewRow = Selectable<QcTaskReviewsTable>;
/** A pending review: a task, or a video's task set shown by one of its frames, with how many of its frames wait. */
export type PendingTaskRow = TaskRow & { frames: number };

const CHUNK = 500;

/** The email and display name of each user (the annotators of a report). */
export async function usersByIds(db: Db, ids: readonly number[]): Promise<Map<number, { email: string; display_name: string }>> {
  const out = new Map<number, { email: string; display_name: string }>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await db.selectFrom('users').select(['id', 'email', 'display_name']).where('id', 'in', ids.slice(i, i + CHUNK)).execute();
    for (const r of rows) out.set(r.id, { email: r.email, display_name: r.display_name });
  }
  return out;
}

export class QualityControlRepository {
  constructor(private readonly db: Db) {}

  settings(projectId: number): Promise<SettingsRow | undefined> {
    return this.db.selectFrom('qc_settings').selectAll().where('project_id', '=', projectId).executeTakeFirst();
  }

  async saveSettings(row: SettingsRow, db: Executor = this.db): Promise<void> {
    const { project_id: _, ...rest } = row;
    await db.insertInto('qc_settings').values(row).onConflict((oc) => oc.column('project_id').doUpdateSet(rest)).execute();
  }

  async imagesInProject(projectId: number, imageIds: readonly number[]) {
    const rows: { id: number; review_state: string; width: number; height: number; video_id: number | null }[] = [];
    for (let i = 0; i < imageIds.length; i += CHUNK) {
      rows.push(...(await this.db.selectFrom('images').select(['id', 'review_state', 'width', 'height', 'video_id']).where('project_id', '=', projectId).where('id', 'in', imageIds.slice(i, i + CHUNK)).execute()));
    }
    return rows;
  }

  /** The accepted annotations of the images, with their ids. */
  async accepted(imageIds: readonly number[]) {
    const rows: { id: number; image_id: number; class_id: number; annotation_type: string; geometry: string }[] = [];
    for (let i = 0; i < imageIds.length; i += CHUNK) {
      rows.push(...(await this.db.selectFrom('annotations').select(['id', 'image_id', 'class_id', 'annotation_type', 'geometry']).where('image_id', 'in', imageIds.slice(i, i + CHUNK)).where('status', '=', 'accepted').orderBy('id').execute()));
    }
    return rows;
  }

  /** The image's first classification (accepted or suggested), as a write would restore it. */
  classificationOf(imageId: number) {
    return this.db
      .selectFrom('annotations')
      .select(['id', 'class_id', 'source', 'confidence', 'status'])
      .where('image_id', '=', imageId)
      .where('annotation_type', '=', 'classification')
      .orderBy('id')
      .executeTakeFirst();
  }

  async classesOf(projectId: number): Promise<Set<number>> {
    const rows = await this.db.selectFrom('classes').select('id').where('project_id', '=', projectId).execute();
    return new Set(rows.map((r) => r.id));
  }

  async markGroundTruth(projectId: number, rows: { image_id: number; shapes: string }[], userId: number, now: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      for (let i = 0; i < rows.length; i += CHUNK) {
        await tx
          .insertInto('qc_ground_truth')
          .values(rows.slice(i, i + CHUNK).map((r) => ({ ...r, project_id: projectId, marked_by: userId, created_at: now })))
          .onConflict((oc) => oc.column('image_id').doUpdateSet((eb) => ({ shapes: eb.ref('excluded.shapes'), marked_by: eb.ref('excluded.marked_by'), created_at: eb.ref('excluded.created_at') })))
          .execute();
      }
    });
  }

  async unmarkGroundTruth(projectId: number, imageId: number): Promise<boolean> {
    const res = await this.db.deleteFrom('qc_ground_truth').where('project_id', '=', projectId).where('image_id', '=', imageId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  groundTruth(projectId: number) {
    return this.db.selectFrom('qc_ground_truth').selectAll().where('project_id', '=', projectId).orderBy('image_id').execute();
  }

  async isGroundTruth(imageId: number): Promise<boolean> {
    return (await this.db.selectFrom('qc_ground_truth').select('image_id').where('image_id', '=', imageId).executeTakeFirst()) !== undefined;
  }

  /**
   * Runs `work` in one transaction holding the project's dealing lock (src/db/write-locks.ts): what it counts of the
   * project's tasks stays true until it commits, so concurrent deals never overfill an image's overlap (issue 29).
   */
  dealing<T>(projectId: number, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (tx) => {
      await lockQualityDealing(tx, projectId);
      return work(tx);
    });
  }

  private tasks(db: Executor = this.db) {
    return db.selectFrom('qc_tasks').innerJoin('images', 'images.id', 'qc_tasks.image_id').selectAll('qc_tasks').select(['images.width', 'images.height', 'images.video_id', 'images.frame']);
  }

  findTask(projectId: number, imageId: number, userId: number, db: Executor = this.db): Promise<TaskRow | undefined> {
    return this.tasks(db).where('qc_tasks.project_id', '=', projectId).where('qc_tasks.image_id', '=', imageId).where('qc_tasks.user_id', '=', userId).executeTakeFirst();
  }

  /** The caller's open task to deal first: one given back for changes before any other, else the oldest. */
  openTask(projectId: number, userId: number, db: Executor = this.db): Promise<TaskRow | undefined> {
    return this.tasks(db)
      .where('qc_tasks.project_id', '=', projectId)
      .where('qc_tasks.user_id', '=', userId)
      .where('qc_tasks.status', '=', 'open')
      .orderBy(sql`case when qc_tasks.review_state = 'changes_requested' then 0 else 1 end`)
      .orderBy('qc_tasks.id')
      .limit(1)
      .executeTakeFirst();
  }

  listTasks(projectId: number, userId: number | undefined, after: number | undefined, limit: number, videoId?: number): Promise<TaskRow[]> {
    let q = this.tasks().where('qc_tasks.project_id', '=', projectId);
    if (userId !== undefined) q = q.where('qc_tasks.user_id', '=', userId);
    if (videoId !== undefined) q = q.where('images.video_id', '=', videoId);
    if (after !== undefined) q = q.where('qc_tasks.id', '>', after);
    return q.orderBy('qc_tasks.id').limit(limit).execute();
  }

  /** The user's tasks on the frames of a video (their task set there), by frame. */
  videoTasks(projectId: number, userId: number, videoId: number, db: Executor = this.db): Promise<TaskRow[]> {
    return this.tasks(db).where('qc_tasks.project_id', '=', projectId).where('qc_tasks.user_id', '=', userId).where('images.video_id', '=', videoId).orderBy('images.frame').execute();
  }

  /**
   * The video's other frames dealt with one of its frames: those the pool would deal the user (unreviewed, not ground
   * truth, undecided, fewer than `overlap` tasks, none of the user's) and, with `groundTruth`, its ground-truth frames
   * the user has not had — so a video's ground-truth frames come inside its task set, never alone.
   */
  async videoFramesFor(projectId: number, videoId: number, userId: number, overlap: number, groundTruth: boolean, db: Executor = this.db): Promise<{ id: number; ground_truth: boolean }[]> {
    const rows = await db
      .selectFrom('images')
      .leftJoin('qc_ground_truth', 'qc_ground_truth.image_id', 'images.id')
      .select(['images.id', 'qc_ground_truth.image_id as truth'])
      .where('images.project_id', '=', projectId)
      .where('images.video_id', '=', videoId)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_tasks').select('qc_tasks.id').whereRef('qc_tasks.image_id', '=', 'images.id').where('qc_tasks.user_id', '=', userId))))
      .where((eb) => {
        const pool = eb.and([
          eb('qc_ground_truth.image_id', 'is', null),
          eb('images.review_state', '=', 'unreviewed'),
          eb.not(eb.exists(eb.selectFrom('qc_decisions').select('qc_decisions.id').where('qc_decisions.project_id', '=', projectId).whereRef('qc_decisions.image_id', '=', 'images.id'))),
          eb(eb.selectFrom('qc_tasks').select((e) => e.fn.countAll<number>().as('n')).whereRef('qc_tasks.image_id', '=', 'images.id'), '<', overlap),
        ]);
        return groundTruth ? eb.or([pool, eb('qc_ground_truth.image_id', 'is not', null)]) : pool;
      })
      .orderBy('images.frame')
      .execute();
    return rows.map((r) => ({ id: r.id, ground_truth: r.truth !== null }));
  }

  /** Deals the images to the user in one insert (a video's frames); images they already have are left as they are. */
  async createTasks(projectId: number, imageIds: readonly number[], userId: number, now: string, db: Executor): Promise<void> {
    for (let i = 0; i < imageIds.length; i += CHUNK) {
      await db
        .insertInto('qc_tasks')
        .values(imageIds.slice(i, i + CHUNK).map((id) => ({ project_id: projectId, image_id: id, user_id: userId, shapes: '[]', status: 'open' as const, created_at: now, updated_at: now })))
        .onConflict((oc) => oc.columns(['image_id', 'user_id']).doNothing())
        .execute();
    }
  }

  /** A ground-truth image of the project the user has no task on, picked at random; undefined when none. */
  async groundTruthFor(projectId: number, userId: number, db: Executor = this.db): Promise<number | undefined> {
    const row = await db
      .selectFrom('qc_ground_truth')
      .select('qc_ground_truth.image_id')
      .where('qc_ground_truth.project_id', '=', projectId)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_tasks').select('qc_tasks.id').whereRef('qc_tasks.image_id', '=', 'qc_ground_truth.image_id').where('qc_tasks.user_id', '=', userId))))
      .orderBy(sql`random()`)
      .limit(1)
      .executeTakeFirst();
    return row?.image_id;
  }

  /** Queues the project's next window of images (see overlap-queue.repository.ts); false when none is left. */
  topUpQueue(projectId: number, overlap: number, db: Executor): Promise<boolean> {
    return topUpQueue(db, IMAGE_QUEUE, projectId, overlap);
  }

  /** Empties the project's overlap queues, images' and samples' (the overlap changed): the next top-ups queue again. */
  async resetQueue(projectId: number, db: Executor): Promise<void> {
    await db.deleteFrom('qc_queue').where('project_id', '=', projectId).execute();
    await db.deleteFrom('qc_sample_queue').where('project_id', '=', projectId).execute();
    await db.updateTable('qc_settings').set({ queued_through: 0, samples_queued_through: 0 }).where('project_id', '=', projectId).execute();
  }

  /**
   * The next image of the overlap queue for the user: the first, in shuffle-key order, that is still unreviewed, not
   * ground truth, without a consensus decision and without a task of the user's. Walks the (project, shuffle key)
   * index and stops at the first such image; the images it passes are those the user already has (open slots of the
   * images dealt last), so the walk stays short at any size. Undefined when the queue has nothing left for the user.
   */
  async poolImageFor(projectId: number, userId: number, db: Executor = this.db): Promise<number | undefined> {
    const row = await db
      .selectFrom('qc_queue')
      .innerJoin('images', 'images.id', 'qc_queue.image_id')
      .select('qc_queue.image_id')
      .where('qc_queue.project_id', '=', projectId)
      .where('images.review_state', '=', 'unreviewed')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_ground_truth').select('qc_ground_truth.image_id').whereRef('qc_ground_truth.image_id', '=', 'qc_queue.image_id'))))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_decisions').select('qc_decisions.id').where('qc_decisions.project_id', '=', projectId).whereRef('qc_decisions.image_id', '=', 'qc_queue.image_id'))))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_tasks').select('qc_tasks.id').whereRef('qc_tasks.image_id', '=', 'qc_queue.image_id').where('qc_tasks.user_id', '=', userId))))
      .orderBy('qc_queue.shuffle_key')
      .orderBy('qc_queue.image_id')
      .limit(1)
      .executeTakeFirst();
    return row?.image_id;
  }

  /** Takes the image out of the queue once `overlap` annotators have it. */
  settleQueue(imageId: number, overlap: number, db: Executor): Promise<void> {
    return settleQueue(db, IMAGE_QUEUE, imageId, overlap);
  }

  /** Deals the image to the user; the existing task when they already have one. */
  async createTask(projectId: number, imageId: number, userId: number, now: string, db: Executor = this.db): Promise<TaskRow> {
    await db
      .insertInto('qc_tasks')
      .values({ project_id: projectId, image_id: imageId, user_id: userId, shapes: '[]', status: 'open', created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['image_id', 'user_id']).doNothing())
      .execute();
    return (await this.findTask(projectId, imageId, userId, db))!;
  }

  async saveTask(id: number, values: { shapes?: string; active_ms: number; saves: number; updated_at: string }): Promise<void> {
    await this.db.updateTable('qc_tasks').set(values).where('id', '=', id).execute();
  }

  /** Submits the user's open tasks on these images (one task, or a video's task set) at once. */
  async submitTasks(ids: readonly number[], values: { active_ms: number; updated_at: string }, activeOf: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      for (let i = 0; i < ids.length; i += CHUNK) {
        await tx.updateTable('qc_tasks').set({ status: 'submitted', review_state: 'pending', updated_at: values.updated_at, submitted_at: values.updated_at }).where('id', 'in', ids.slice(i, i + CHUNK)).where('status', '=', 'open').execute();
      }
      await tx.updateTable('qc_tasks').set({ active_ms: values.active_ms }).where('id', '=', activeOf).execute();
    });
  }

  /** Every submitted task of the project (the report's input), with the video and frame of a frame's. */
  submitted(projectId: number, imageId?: number) {
    let q = this.db
      .selectFrom('qc_tasks')
      .innerJoin('images', 'images.id', 'qc_tasks.image_id')
      .select(['qc_tasks.image_id', 'qc_tasks.user_id', 'qc_tasks.shapes', 'qc_tasks.active_ms', 'qc_tasks.submitted_at', 'images.video_id', 'images.frame'])
      .where('qc_tasks.project_id', '=', projectId)
      .where('qc_tasks.status', '=', 'submitted');
    if (imageId !== undefined) q = q.where('qc_tasks.image_id', '=', imageId);
    return q.orderBy('qc_tasks.id').execute();
  }

  /**
   * Review outcomes of the images each user submitted, reviews the submitter decided themselves left out: a lead who
   * submits and approves their own labels (as when preparing ground truth) reviewed, they were not reviewed.
   */
  async reviewCounts(projectId: number) {
    const rows = await this.db
      .selectFrom('reviews')
      .select([
        'submitted_by',
        (eb) => eb.fn.countAll<number>().as('submitted'),
        sql<number>`sum(case when status = 'approved' then 1 else 0 end)`.as('approved'),
        sql<number>`sum(case when status = 'rejected' then 1 else 0 end)`.as('rejected'),
        sql<number>`sum(case when status = 'changes' then 1 else 0 end)`.as('changes'),
      ])
      .where('project_id', '=', projectId)
      .where('submitted_by', 'is not', null)
      .where((eb) => eb.or([eb('decided_by', 'is', null), eb('decided_by', '!=', eb.ref('submitted_by'))]))
      .groupBy('submitted_by')
      .execute();
    return rows.map((r) => ({ user_id: r.submitted_by!, submitted: Number(r.submitted), approved: Number(r.approved), rejected: Number(r.rejected), changes: Number(r.changes) }));
  }

  /** Task-review outcomes per annotator (reviews a user decided on their own task left out, as for image reviews). */
  taskReviewCounts(projectId: number): Promise<{ user_id: number; accepted: number; changes: number }[]> {
    return taskReviewCounts(this.db, IMAGE_REVIEWS, projectId);
  }

  /**
   * Submitted tasks of the project waiting for review, oldest task first; the reviewer's own left out. A video's
   * task set is reviewed whole, so it is one row: the frame it shows (the first the annotator stored shapes on, else
   * its first frame), with `frames`, how many of the set's frames wait (1 for an image). `image_id` finds the set of
   * any of its frames.
   */
  async pendingReviews(projectId: number, reviewerId: number, query: ReviewQuery): Promise<PendingTaskRow[]> {
    const empty = (shapes: 'qc_tasks.shapes' | 't2.shapes') => sql`case when ${sql.ref(shapes)} = '[]' then 1 else 0 end`;
    const set = (eb: ExpressionBuilder<Database, 'qc_tasks' | 'images'>) =>
      eb
        .selectFrom('qc_tasks as t2')
        .innerJoin('images as i2', 'i2.id', 't2.image_id')
        .whereRef('t2.user_id', '=', 'qc_tasks.user_id')
        .whereRef('i2.video_id', '=', 'images.video_id')
        .where('t2.status', '=', 'submitted')
        .where('t2.review_state', '=', 'pending');
    let from = this.tasks()
      .select((eb) => set(eb).select((e) => e.fn.countAll<number>().as('n')).as('frames'))
      .where((eb) => eb.or([
        eb('images.video_id', 'is', null),
        eb.not(eb.exists(set(eb).select('t2.id').where(sql<boolean>`(${empty('t2.shapes')} < ${empty('qc_tasks.shapes')} or (${empty('t2.shapes')} = ${empty('qc_tasks.shapes')} and i2.frame < images.frame))`))),
      ]));
    const { image_id: imageId, ...rest } = query;
    if (imageId !== undefined) {
      from = from.where((eb) => eb.or([eb('qc_tasks.image_id', '=', imageId), eb('images.video_id', '=', eb.selectFrom('images as i3').select('i3.video_id').where('i3.id', '=', imageId))]));
    }
    const rows = await pendingReviews(from, IMAGE_REVIEWS, projectId, reviewerId, rest);
    return rows.map((r) => ({ ...r, frames: r.video_id === null ? 1 : Number(r.frames) }));
  }

  /**
   * Records a decision on a pending task (see task-reviews.repository.ts) — for a video frame, on the annotator's whole
   * pending task set, recorded once on the frame named; undefined when nothing was pending.
   */
  decideReview(task: TaskRow, values: ReviewValues): Promise<TaskReviewRow | undefined> {
    const scope = task.video_id === null
      ? undefined
      : ((update, tx) => update.where('user_id', '=', task.user_id).where('image_id', 'in', tx.selectFrom('images').select('id').where('video_id', '=', task.video_id))) satisfies ReviewScope;
    return decideReview(this.db, IMAGE_REVIEWS, task, values, scope) as Promise<TaskReviewRow | undefined>;
  }

  taskReviews(projectId: number, query: ReviewQuery): Promise<TaskReviewRow[]> {
    return taskReviews(this.db, IMAGE_REVIEWS, projectId, query) as Promise<TaskReviewRow[]>;
  }

  users(ids: readonly number[]): Promise<Map<number, { email: string; display_name: string }>> {
    return usersByIds(this.db, ids);
  }

  async decidedImages(projectId: number): Promise<Set<number>> {
    const rows = await this.db.selectFrom('qc_decisions').select('image_id').distinct().where('project_id', '=', projectId).execute();
    return new Set(rows.map((r) => r.image_id));
  }

  insertDecision(values: Omit<DecisionRow, 'id'>): Promise<DecisionRow> {
    return this.db.insertInto('qc_decisions').values(values).returningAll().executeTakeFirstOrThrow();
  }

  decisions(projectId: number, imageId?: number): Promise<DecisionRow[]> {
    let q = this.db.selectFrom('qc_decisions').selectAll().where('project_id', '=', projectId);
    if (imageId !== undefined) q = q.where('image_id', '=', imageId);
    return q.orderBy('id').limit(10_000).execute();
  }
}
