import { sql, type Selectable } from 'kysely';
import type { Db, Executor, Tx } from '../../db/database.js';
import type { QcSampleGroundTruthTable, QcSampleTasksTable } from '../../db/schema.js';
import { lockQualityDealing } from '../../db/write-locks.js';
import { QUEUE_WINDOW, usersByIds } from './quality-control.repository.js';

export type SampleTaskRow = Selectable<QcSampleTasksTable>;
export type SampleGroundTruthRow = Selectable<QcSampleGroundTruthTable>;

const CHUNK = 500;
/** The dealing order of samples: the same fixed permutation of ids as images' (see quality-control.repository.ts), stored as each queued sample's shuffle key. */
const SHUFFLE = sql<number>`((samples.id * 2654435761) % 4294967291)`;

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
    const rows: { id: number; review_state: string; label: string | null; spans: string | null; modality: string }[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      rows.push(...(await this.db.selectFrom('samples').select(['id', 'review_state', 'label', 'spans', 'modality']).where('project_id', '=', projectId).where('id', 'in', ids.slice(i, i + CHUNK)).execute()));
    }
    return rows;
  }

  async markGroundTruth(projectId: number, rows: { sample_id: number; label: string | null; spans: string | null }[], userId: number, now: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      for (let i = 0; i < rows.length; i += CHUNK) {
        await tx
          .insertInto('qc_sample_ground_truth')
          .values(rows.slice(i, i + CHUNK).map((r) => ({ ...r, project_id: projectId, marked_by: userId, created_at: now })))
          .onConflict((oc) => oc.column('sample_id').doUpdateSet((eb) => ({ label: eb.ref('excluded.label'), spans: eb.ref('excluded.spans'), marked_by: eb.ref('excluded.marked_by'), created_at: eb.ref('excluded.created_at') })))
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

  openTask(projectId: number, userId: number, db: Executor): Promise<SampleTaskRow | undefined> {
    return db.selectFrom('qc_sample_tasks').selectAll().where('project_id', '=', projectId).where('user_id', '=', userId).where('status', '=', 'open').orderBy('id').limit(1).executeTakeFirst();
  }

  /** A ground-truth sample of the project the user has no task on, at random. */
  async groundTruthFor(projectId: number, userId: number, db: Executor): Promise<number | undefined> {
    const row = await db.selectFrom('qc_sample_ground_truth').select('qc_sample_ground_truth.sample_id').where('qc_sample_ground_truth.project_id', '=', projectId)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('qc_sample_tasks').select('qc_sample_tasks.id').whereRef('qc_sample_tasks.sample_id', '=', 'qc_sample_ground_truth.sample_id').where('qc_sample_tasks.user_id', '=', userId))))
      .orderBy(sql`random()`).limit(1).executeTakeFirst();
    return row?.sample_id;
  }

  /**
   * Puts the project's next window of samples (by id, after the highest queued so far) into the overlap queue, as
   * QualityControlRepository.topUpQueue does for images: the unreviewed ones with fewer than `overlap` answers, each
   * under its shuffle key. False when no sample is left to queue.
   */
  async topUpQueue(projectId: number, overlap: number, db: Executor): Promise<boolean> {
    const mark = Number((await db.selectFrom('qc_settings').select('samples_queued_through').where('project_id', '=', projectId).executeTakeFirst())?.samples_queued_through ?? 0);
    const after = db.selectFrom('samples').select('samples.id').where('samples.project_id', '=', projectId).where('samples.id', '>', mark);
    const edge = (await after.orderBy('samples.id').limit(1).offset(QUEUE_WINDOW - 1).executeTakeFirst())?.id
      ?? (await db.selectFrom('samples').select((eb) => eb.fn.max('samples.id').as('top')).where('samples.project_id', '=', projectId).executeTakeFirst())?.top;
    const top = Number(edge ?? 0);
    if (top <= mark) return false;
    const fresh = db
      .selectFrom('samples')
      .select(['samples.id', 'samples.project_id', SHUFFLE.as('shuffle_key')])
      .where('samples.project_id', '=', projectId)
      .where('samples.id', '>', mark)
      .where('samples.id', '<=', top)
      .where('samples.review_state', '=', 'unreviewed')
      .where((eb) => eb(eb.selectFrom('qc_sample_tasks').select((e) => e.fn.countAll<number>().as('n')).whereRef('qc_sample_tasks.sample_id', '=', 'samples.id'), '<', overlap));
    await db.insertInto('qc_sample_queue').columns(['sample_id', 'project_id', 'shuffle_key']).expression(fresh).onConflict((oc) => oc.column('sample_id').doNothing()).execute();
    await db.updateTable('qc_settings').set({ samples_queued_through: top }).where('project_id', '=', projectId).execute();
    return true;
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
  async settleQueue(sampleId: number, overlap: number, db: Executor): Promise<void> {
    const row = await db.selectFrom('qc_sample_tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('sample_id', '=', sampleId).executeTakeFirstOrThrow();
    if (Number(row.n) >= overlap) await db.deleteFrom('qc_sample_queue').where('sample_id', '=', sampleId).execute();
  }

  async createTask(projectId: number, sampleId: number, userId: number, now: string, db: Executor): Promise<SampleTaskRow> {
    await db.insertInto('qc_sample_tasks').values({ project_id: projectId, sample_id: sampleId, user_id: userId, label: null, spans: null, status: 'open', created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['sample_id', 'user_id']).doNothing()).execute();
    return (await this.findTask(projectId, sampleId, userId, db))!;
  }

  async saveTask(id: number, values: { label?: string | null; spans?: string | null; status?: 'submitted'; updated_at: string; submitted_at?: string }): Promise<void> {
    await this.db.updateTable('qc_sample_tasks').set(values).where('id', '=', id).execute();
  }

  submitted(projectId: number) {
    return this.db.selectFrom('qc_sample_tasks').select(['sample_id', 'user_id', 'label', 'spans']).where('project_id', '=', projectId).where('status', '=', 'submitted').orderBy('id').execute();
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
