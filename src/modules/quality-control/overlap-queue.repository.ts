import { sql, type Kysely } from 'kysely';
import type { Executor } from '../../db/database.js';

/** Items put in an overlap queue at a time (see topUpQueue): their dealing order is shuffled among them. */
export const QUEUE_WINDOW = 2000;

/**
 * One of the two overlap queues (issue 29), images' and samples': the items, the queue table and its item column,
 * the tasks that fill an item's overlap, and the `qc_settings` column that marks how far by id the queue has reached.
 */
export interface OverlapQueue {
  items: 'images' | 'samples';
  queue: 'qc_queue' | 'qc_sample_queue';
  key: 'image_id' | 'sample_id';
  tasks: 'qc_tasks' | 'qc_sample_tasks';
  mark: 'queued_through' | 'samples_queued_through';
}

export const IMAGE_QUEUE: OverlapQueue = { items: 'images', queue: 'qc_queue', key: 'image_id', tasks: 'qc_tasks', mark: 'queued_through' };
export const SAMPLE_QUEUE: OverlapQueue = { items: 'samples', queue: 'qc_sample_queue', key: 'sample_id', tasks: 'qc_sample_tasks', mark: 'samples_queued_through' };

/**
 * The order items are dealt in: a fixed pseudo-random permutation of their ids (Knuth's multiplicative hash), stored
 * as each queued item's shuffle key, so the order of dealing says nothing about what an item is. Migration 0048's
 * insert triggers compute the same key.
 */
const shuffleOf = (items: OverlapQueue['items']) => sql<number>`((${sql.ref(`${items}.id`)} * 2654435761) % 4294967291)`;

/**
 * Puts the project's next window of items (by id, after the highest queued so far) into the queue: the unreviewed
 * ones with fewer than `overlap` tasks, each under its shuffle key. Dealing calls it when the queue has nothing left
 * for the annotator, so a request pays for at most a window, never for the whole project, and items added later
 * join when the queue reaches them. False when no item is left to queue.
 */
export async function topUpQueue(executor: Executor, q: OverlapQueue, projectId: number, overlap: number): Promise<boolean> {
  const db = executor as unknown as Kysely<any>;
  const id = `${q.items}.id`;
  const settings = await db.selectFrom('qc_settings').select(q.mark).where('project_id', '=', projectId).executeTakeFirst();
  const mark = Number(settings?.[q.mark] ?? 0);
  const after = db.selectFrom(q.items).select(id).where(`${q.items}.project_id`, '=', projectId).where(id, '>', mark);
  const edge = (await after.orderBy(id).limit(1).offset(QUEUE_WINDOW - 1).executeTakeFirst())?.id
    ?? (await db.selectFrom(q.items).select((eb) => eb.fn.max(id).as('top')).where(`${q.items}.project_id`, '=', projectId).executeTakeFirst())?.top;
  const top = Number(edge ?? 0);
  if (top <= mark) return false;
  const fresh = db
    .selectFrom(q.items)
    .select([id, `${q.items}.project_id`, shuffleOf(q.items).as('shuffle_key')])
    .where(`${q.items}.project_id`, '=', projectId)
    .where(id, '>', mark)
    .where(id, '<=', top)
    .where(`${q.items}.review_state`, '=', 'unreviewed')
    .where((eb) => eb(eb.selectFrom(q.tasks).select((e) => e.fn.countAll<number>().as('n')).whereRef(`${q.tasks}.${q.key}`, '=', id), '<', overlap));
  await db.insertInto(q.queue).columns([q.key, 'project_id', 'shuffle_key']).expression(fresh).onConflict((oc) => oc.column(q.key).doNothing()).execute();
  await db.updateTable('qc_settings').set({ [q.mark]: top }).where('project_id', '=', projectId).execute();
  return true;
}

/** Takes the item out of the queue once `overlap` annotators have it. */
export async function settleQueue(executor: Executor, q: OverlapQueue, itemId: number, overlap: number): Promise<void> {
  const db = executor as unknown as Kysely<any>;
  const row = await db.selectFrom(q.tasks).select((eb) => eb.fn.countAll<number>().as('n')).where(q.key, '=', itemId).executeTakeFirstOrThrow();
  if (Number(row.n) >= overlap) await db.deleteFrom(q.queue).where(q.key, '=', itemId).execute();
}
