import type { Insertable, Updateable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { ProjectStoragesTable, StorageObjectsTable } from '../../db/schema.js';
import { chunks } from '../../lib/batches.js';
import { storageBlobPrefix } from '../../storage/keys.js';
import type { ObjectsQuery, StorageObjectRow, StorageRow, StorageTallies, SyncCounts } from './storages.schemas.js';

const CHUNK = 500;

export class StoragesRepository {
  constructor(private readonly db: Db) {}

  insert(values: Insertable<ProjectStoragesTable>): Promise<StorageRow> {
    return this.db.insertInto('project_storages').values(values).returningAll().executeTakeFirstOrThrow();
  }

  find(id: number): Promise<StorageRow | undefined> {
    return this.db.selectFrom('project_storages').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(projectId: number): Promise<StorageRow[]> {
    return this.db.selectFrom('project_storages').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  }

  update(id: number, values: Updateable<ProjectStoragesTable>): Promise<StorageRow> {
    return this.db.updateTable('project_storages').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('project_storages').where('id', '=', id).execute();
  }

  /** How many of the project's images read their original from this storage's bucket. */
  async referencingImages(projectId: number, storageId: number): Promise<number> {
    const row = await this.db
      .selectFrom('images')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .where('blob_key', 'like', `${storageBlobPrefix(storageId)}%`)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async tallies(storageId: number): Promise<StorageTallies> {
    const row = await this.db
      .selectFrom('storage_objects')
      .select((eb) => [
        eb.fn.countAll<number>().as('objects'),
        eb.fn.sum<number>(eb.case().when(eb.and([eb('outcome', 'in', ['imported', 'duplicate']), eb('missing_since', 'is', null)])).then(1).else(0).end()).as('imported'),
        eb.fn.sum<number>(eb.case().when(eb.and([eb('outcome', 'in', ['imported', 'duplicate']), eb('missing_since', 'is not', null)])).then(1).else(0).end()).as('missing'),
      ])
      .where('storage_id', '=', storageId)
      .executeTakeFirstOrThrow();
    return { objects: Number(row.objects), imported: Number(row.imported ?? 0), missing: Number(row.missing ?? 0) };
  }

  /** Source storages whose scheduled sync is due. */
  due(now: string): Promise<StorageRow[]> {
    return this.db.selectFrom('project_storages').selectAll().where('next_sync_at', '<=', now).where('purpose', '=', 'source').orderBy('next_sync_at').limit(100).execute();
  }

  /**
   * Moves a due storage's next sync on, only if no other process did so first (its `next_sync_at` is still the one
   * read): the process whose update wins starts the sync.
   */
  async claimDue(id: number, seen: string, next: string): Promise<boolean> {
    const res = await this.db.updateTable('project_storages').set({ next_sync_at: next }).where('id', '=', id).where('next_sync_at', '=', seen).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /**
   * Records the storage's new sync job, only if its latest one is still `previous` (two requests to sync at once:
   * one wins, the other is told a sync is under way).
   */
  async setSyncJob(id: number, previous: number | null, jobId: number): Promise<boolean> {
    const res = await this.db
      .updateTable('project_storages')
      .set({ sync_job_id: jobId })
      .where('id', '=', id)
      .where((eb) => (previous === null ? eb('sync_job_id', 'is', null) : eb('sync_job_id', '=', previous)))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Begins a sync: its number (objects it lists are marked with it). */
  async beginSync(id: number): Promise<number> {
    const row = await this.db
      .updateTable('project_storages')
      .set((eb) => ({ sync_count: eb('sync_count', '+', 1) }))
      .where('id', '=', id)
      .returning('sync_count')
      .executeTakeFirstOrThrow();
    return row.sync_count;
  }

  async finishSync(id: number, outcome: { status: 'succeeded'; counts: SyncCounts } | { status: 'failed'; error: string }, now: string): Promise<void> {
    await this.db
      .updateTable('project_storages')
      .set({
        last_sync_at: now,
        last_sync_status: outcome.status,
        last_sync_error: outcome.status === 'failed' ? outcome.error.slice(0, 2000) : null,
        ...(outcome.status === 'succeeded' ? { last_sync: JSON.stringify(outcome.counts) } : {}),
      })
      .where('id', '=', id)
      .execute();
  }

  /** The objects of these keys the storage's syncs have seen before. */
  async known(storageId: number, keys: string[]): Promise<Map<string, StorageObjectRow>> {
    const found = new Map<string, StorageObjectRow>();
    for (const chunk of chunks(keys, CHUNK)) {
      const rows = await this.db.selectFrom('storage_objects').selectAll().where('storage_id', '=', storageId).where('object_key', 'in', chunk).execute();
      for (const row of rows) found.set(row.object_key, row);
    }
    return found;
  }

  /** Marks objects as listed by sync `sync` (and present again, if they had gone missing). */
  async markSeen(ids: number[], sync: number): Promise<void> {
    for (const chunk of chunks(ids, CHUNK)) {
      await this.db.updateTable('storage_objects').set({ seen_sync: sync, missing_since: null }).where('id', 'in', chunk).execute();
    }
  }

  /** Records what became of objects (new ones inserted, changed ones overwritten). */
  async record(values: Insertable<StorageObjectsTable>[], db: Executor = this.db): Promise<void> {
    for (const chunk of chunks(values, CHUNK)) {
      await db
        .insertInto('storage_objects')
        .values(chunk)
        .onConflict((oc) => oc.columns(['storage_id', 'object_key']).doUpdateSet((eb) => ({
          etag: eb.ref('excluded.etag'),
          size_bytes: eb.ref('excluded.size_bytes'),
          outcome: eb.ref('excluded.outcome'),
          detail: eb.ref('excluded.detail'),
          image_id: eb.ref('excluded.image_id'),
          seen_sync: eb.ref('excluded.seen_sync'),
          imported_at: eb.ref('excluded.imported_at'),
          missing_since: null,
        })))
        .execute();
    }
  }

  /** Objects sync `sync` did not list that were there before: marked missing now; how many. */
  async markMissing(storageId: number, sync: number, now: string): Promise<number> {
    const res = await this.db
      .updateTable('storage_objects')
      .set({ missing_since: now })
      .where('storage_id', '=', storageId)
      .where('seen_sync', '<', sync)
      .where('missing_since', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  objects(storageId: number, query: ObjectsQuery): Promise<StorageObjectRow[]> {
    let q = this.db.selectFrom('storage_objects').selectAll().where('storage_id', '=', storageId);
    if (query.missing !== undefined) q = q.where('missing_since', query.missing ? 'is not' : 'is', null);
    if (query.outcome !== undefined) q = q.where('outcome', '=', query.outcome);
    if (query.after !== undefined) q = q.where('id', '>', query.after);
    return q.orderBy('id').limit(query.limit).execute();
  }

  findVersion(versionId: number): Promise<{ id: number; project_id: number; number: number; status: string } | undefined> {
    return this.db.selectFrom('versions').select(['id', 'project_id', 'number', 'status']).where('id', '=', versionId).executeTakeFirst();
  }
}
