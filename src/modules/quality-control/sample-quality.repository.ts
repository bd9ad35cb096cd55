import { sql, type Selectable } from 'kysely';
import type { Db, Executor, Tx } from '../../db/database.js';
import type { QcSampleGroundTruthTable, QcSampleTaskReviewsTable, QcSampleTasksTable } from '../../db/schema.js';
import { lockQualityDealing } from '../../db/write-locks.js';
import { SAMPLE_QUEUE, settleQueue, topUpQueue } from './overlap-queue.repository.js';
import { usersByIds } from './quality-control.repository.js';
import { decideReview, pendingReviews, SAMPLE_REVIEWS, taskReviewCounts, taskReviews, type ReviewQuery, type ReviewValues } from './task-reviews.repository.js';

export type SampleTaskRow = Selectable<QcSampleTasksTable>;
export type SampleTaskReviewRow = Selectable<QcSampleTaskReviewsTable>;
/** A sample task waiting for review, with the sample's modality and content (JSON text). */
export type PendingSampleTaskRow = SampleTaskRow & { modality: string; data: string };
export type SampleGroundTruthRow = Selectable<QcSampleGroundTruthTable>;

const CHUNK = 500;

/** Quality control of samples (issue 29): ground truth, each annotator's answers, dealing. */
export class SampleQualityRepository {
  constructor(private readonly db: Db) {}

  /** One transaction holding the project's dealing lock (shared with images': one dealer at a time per project). */
  dealing<T>(projectId: number, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (tx) => {
      await lockQualityDealing(tx, projectId);
      return work(tx);
    });
  }

  async samplesInProject(projectId: number, ids: readonly number[]) {
    const rows: { id: number; review_state: string; label: string | null; labels: string | null; spans: string | null; value: string | null; modality: string }[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      rows.push(...(await this.db.selectFrom('samples').select(['id', 'review_state', 'label', 'labels', 'spans', 'value', 'modality']).where('project_id', '=', projectId).where('id', 'in', ids.slice(i, i + CHUNK)).execute()));
    }
    return rows;
  }

  /** A sample's modality and content (JSON text), which a task's answer is checked against. */
  sampleContent(projectId: number, sampleId: number) {
    return this.db.selectFrom('samples').select(['modality', 'data']).where('project_id', '=', projectId).where('id', '=', sampleId).executeTakeFirst();
  }

  async markGroundTruth(projectId: number, rows: { sample_id: number; label: string | null; labels: string | null; spans: string | null; value: string | null }[], userId: number, now: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      for (let i = 0; i < rows.length; i += CHUNK) {
        await tx
          .insertInto('qc_sample_ground_truth')
          .values(rows.slice(i, i + CHUNK).map((r) => ({ ...r, project_id: projectId, marked_by: userId, created_at: now })))
          .onConflict((oc) => oc.column('sample_id').doUpdateSet((eb) => ({ label: eb.ref('excluded.label'), labels: eb.ref('excluded.labels'), spans: eb.ref('excluded.spans'), value: eb.ref('excluded.value'), marked_by: eb.ref('excluded.marked_by'), created_at: eb.ref('excluded.created_at') })))
          .execute();
      }
    });
  }

  groundTruth(projectId: number): Promise<SampleGroundTruthRow[]> {
    return this.db.selectFrom('qc_sample_ground_truth').selectAll().where('project_id', '=', projectId).orderBy('sample_id').execute();
  }

  findTask(projectId: number, sampleId: number, userId: number, db: Executor = this.db): Promise<SampleTaskRow | undefined> {
    return db.selectFrom('qc_sample_tasks').selectAll().where('project_id', '=', projectId).where('sample_id', '=', sampleId).where('user_id', '=', userId).executeTakeFirst();
  }

  /** The caller's open task to deal first: one given back for changes before any other, else the oldest. */
  openTask(projectId: number, userId: number, db: Executor): Promise<SampleTaskRow | undefined> {
    return db.selectFrom('qc_sample_tasks').selectAll().where('project_id', '=', projectId).where('user_id', '=', userId).where('status', '=', 'open')
      .orderBy(sql`case when review_state = 'changes_requested' then 0 else 1 end`).orderBy('id').limit(1).executeTakeFirst();
  }

  /** A ground-truth sample of the project the user has no task on, at random. */
  async groundTruthFor(projectId: number, userId: number, db: Executor): Promise<number | undefined> {
    const row = await db.selectFrom('qc_sample_ground_truth').select('qc_sample_ground_truth.sample_id').where('qc_sample_ground_truth.project_id', '=', projectId)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_sample_tasks').select('qc_sample_tasks.id').whereRef('qc_sample_tasks.sample_id', '=', 'qc_sample_ground_truth.sample_id').where('qc_sample_tasks.user_id', '=', userId))))
      .orderBy(sql`random()`).limit(1).executeTakeFirst();
    return row?.sample_id;
  }

  /** Queues the project's next window of samples (see overlap-queue.repository.ts); false when none is left. */
  topUpQueue(projectId: number, overlap: number, db: Executor): Promise<boolean> {
    return topUpQueue(db, SAMPLE_QUEUE, projectId, overlap);
  }

  /**
   * The next sample of the overlap queue for the user: the first, in shuffle-key order, still unreviewed, not ground
   * truth and without an answer of the user's (a walk of the queue's index that stops at the first such sample).
   */
  async poolSampleFor(projectId: number, userId: number, db: Executor): Promise<number | undefined> {
    const row = await db
      .selectFrom('qc_sample_queue')
      .innerJoin('samples', 'samples.id', 'qc_sample_queue.sample_id')
      .select('qc_sample_queue.sample_id')
      .where('qc_sample_queue.project_id', '=', projectId)
      .where('samples.review_state', '=', 'unreviewed')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_sample_ground_truth').select('qc_sample_ground_truth.sample_id').whereRef('qc_sample_ground_truth.sample_id', '=', 'qc_sample_queue.sample_id'))))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_sample_tasks').select('qc_sample_tasks.id').whereRef('qc_sample_tasks.sample_id', '=', 'qc_sample_queue.sample_id').where('qc_sample_tasks.user_id', '=', userId))))
      .orderBy('qc_sample_queue.shuffle_key')
      .orderBy('qc_sample_queue.sample_id')
      .limit(1)
      .executeTakeFirst();
    return row?.sample_id;
  }

  /** Takes the sample out of the queue once `overlap` annotators have it. */
  settleQueue(sampleId: number, overlap: number, db: Executor): Promise<void> {
    return settleQueue(db, SAMPLE_QUEUE, sampleId, overlap);
  }

  async createTask(projectId: number, sampleId: number, userId: number, now: string, db: Executor): Promise<SampleTaskRow> {
    await db.insertInto('qc_sample_tasks').values({ project_id: projectId, sample_id: sampleId, user_id: userId, label: null, spans: null, status: 'open', created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['sample_id', 'user_id']).doNothing()).execute();
    return (await this.findTask(projectId, sampleId, userId, db))!;
  }

  async saveTask(id: number, values: { label?: string | null; labels?: string | null; spans?: string | null; value?: string | null; status?: 'submitted'; review_state?: 'pending'; updated_at: string; submitted_at?: string }): Promise<void> {
    await this.db.updateTable('qc_sample_tasks').set(values).where('id', '=', id).execute();
  }

  submitted(projectId: number) {
    return this.db.selectFrom('qc_sample_tasks').select(['sample_id', 'user_id', 'label', 'labels', 'spans', 'value']).where('project_id', '=', projectId).where('status', '=', 'submitted').orderBy('id').execute();
  }

  /** Submitted sample tasks waiting for review, oldest first; the reviewer's own left out. */
  pendingReviews(projectId: number, reviewerId: number, query: ReviewQuery): Promise<PendingSampleTaskRow[]> {
    const from = this.db.selectFrom('qc_sample_tasks').innerJoin('samples', 'samples.id', 'qc_sample_tasks.sample_id').selectAll('qc_sample_tasks').select(['samples.modality', 'samples.data']);
    return pendingReviews(from, SAMPLE_REVIEWS, projectId, reviewerId, query);
  }


  /** Records a decision on a pending task (see task-reviews.repository.ts); undefined when it was no longer pending. */
  decideReview(task: SampleTaskRow, values: ReviewValues): Promise<SampleTaskReviewRow | undefined> {
    return decideReview(this.db, SAMPLE_REVIEWS, task, values) as Promise<SampleTaskReviewRow | undefined>;
  }

  taskReviews(projectId: number, query: ReviewQuery): Promise<SampleTaskReviewRow[]> {
    return taskReviews(this.db, SAMPLE_REVIEWS, projectId, query) as Promise<SampleTaskReviewRow[]>;
  }

  taskReviewCounts(projectId: number) {
    return taskReviewCounts(this.db, SAMPLE_REVIEWS, projectId);
  }

  users(ids: readonly number[]) {
    return usersByIds(this.db, ids);
  }

  /** The texts of the project's text samples among `ids` (their `data.text`). */
  async texts(projectId: number, ids: readonly number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await this.db.selectFrom('samples').select(['id', 'data']).where('project_id', '=', projectId).where('modality', '=', 'text').where('id', 'in', ids.slice(i, i + CHUNK)).execute();
      for (const r of rows) {
        const text = (JSON.parse(r.data) as { text?: unknown }).text;
        if (typeof text === 'string') out.set(r.id, text);
      }
    }
    return out;
  }
}
