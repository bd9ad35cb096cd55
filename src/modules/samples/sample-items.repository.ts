import type { Db, Executor } from '../../db/database.js';
import { PreparedQuery } from '../../db/prepared-query.js';
import type { WorkItems } from '../workflow/work-items.ports.js';
import type { SampleRow } from './samples.repository.js';

export type SampleWithOwner = SampleRow & { owner_id: number };

export interface SampleLockRow {
  sample_id: number;
  user_id: number;
  email: string;
  acquired_at: string;
  expires_at: string;
}

/** Samples as items of the team workflow: the sample with its project's owner, its assignee column, `sample_locks`. */
export class SampleItemsRepository implements WorkItems<SampleWithOwner, SampleLockRow, SampleLockRow> {
  readonly noun = 'Sample';
  /** Asked by every sample route and, for the lock, inside every label edit (a PATCH on the hot path): prepared once. */
  private readonly withOwner: PreparedQuery<{ id: number }, SampleWithOwner>;
  private readonly lock: PreparedQuery<{ id: number }, SampleLockRow>;

  constructor(private readonly db: Db) {
    this.withOwner = new PreparedQuery(db, ['id'], (p) =>
      db.selectFrom('samples').innerJoin('projects', 'projects.id', 'samples.project_id').selectAll('samples').select('projects.owner_id').where('samples.id', '=', p.id));
    this.lock = new PreparedQuery(db, ['id'], (p) =>
      db
        .selectFrom('sample_locks')
        .innerJoin('users', 'users.id', 'sample_locks.user_id')
        .select(['sample_locks.sample_id', 'sample_locks.user_id', 'users.email', 'sample_locks.acquired_at', 'sample_locks.expires_at'])
        .where('sample_locks.sample_id', '=', p.id));
  }

  async find(id: number): Promise<SampleWithOwner | undefined> {
    return (await this.withOwner.run({ id })).rows[0];
  }

  async isAssigned(sample: SampleWithOwner, userId: number): Promise<boolean> {
    return sample.assignee_id === userId;
  }

  findLock(sampleId: number): Promise<SampleLockRow | undefined> {
    return this.lockHolder(sampleId);
  }

  async lockHolder(sampleId: number, db: Executor = this.db): Promise<SampleLockRow | undefined> {
    return (await this.lock.run({ id: sampleId }, db)).rows[0];
  }

  async acquireLock(sampleId: number, userId: number, now: string, expiresAt: string): Promise<boolean> {
    const row = await this.db
      .insertInto('sample_locks')
      .values({ sample_id: sampleId, user_id: userId, acquired_at: now, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column('sample_id')
          .doUpdateSet((eb) => ({
            acquired_at: eb.case().when('sample_locks.user_id', '=', userId).then(eb.ref('sample_locks.acquired_at')).else(eb.ref('excluded.acquired_at')).end(),
            user_id: eb.ref('excluded.user_id'),
            expires_at: eb.ref('excluded.expires_at'),
          }))
          .where((eb) => eb.or([eb('sample_locks.user_id', '=', userId), eb('sample_locks.expires_at', '<=', now)])),
      )
      .returning('sample_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async releaseLock(sampleId: number, userId: number | null): Promise<boolean> {
    let query = this.db.deleteFrom('sample_locks').where('sample_id', '=', sampleId);
    if (userId !== null) query = query.where('user_id', '=', userId);
    return Number((await query.executeTakeFirst()).numDeletedRows) > 0;
  }
}
