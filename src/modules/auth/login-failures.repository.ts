import { sql } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import { lockLoginFailures } from '../../db/write-locks.js';

/** A throttle key's failures in a row and the time of the last one. */
export interface FailureEntry {
  count: number;
  last: number;
}

/**
 * The login throttle's failure counts, in the database so that every API process sees the same ones (migration 0037).
 * A key's count restarts when its last failure is older than the memory the caller passes.
 */
export class LoginFailuresRepository {
  constructor(private readonly db: Db) {}

  /**
   * Counts one attempt of `key` as a failure unless `waitOf` (given its failures so far) asks it to wait: returns that
   * wait, 0 when counted. One key's attempts take turns, on every process, so parallel ones see each other's count.
   */
  take(key: string, now: number, sinceMs: number, waitOf: (entry: FailureEntry | undefined) => number): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      await lockLoginFailures(tx, key);
      const wait = waitOf(await this.get(key, sinceMs, tx));
      if (wait <= 0) await this.add(key, now, sinceMs, tx);
      return wait;
    });
  }

  async get(key: string, sinceMs: number, db: Executor = this.db): Promise<FailureEntry | undefined> {
    const row = await db.selectFrom('login_failures').select(['count', 'last_ms']).where('key', '=', key).where('last_ms', '>=', sinceMs).executeTakeFirst();
    return row && { count: row.count, last: Number(row.last_ms) };
  }

  /** Counts one failure of `key` at `now`, and forgets every key quiet since before `sinceMs`. */
  async add(key: string, now: number, sinceMs: number, db: Executor = this.db): Promise<void> {
    await db
      .insertInto('login_failures')
      .values({ key, count: 1, last_ms: now })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql`case when login_failures.last_ms < ${sinceMs} then 1 else login_failures.count + 1 end`,
          last_ms: now,
        }),
      )
      .execute();
    await db.deleteFrom('login_failures').where('last_ms', '<', sinceMs).execute();
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('login_failures').where('key', '=', key).execute();
  }
}
