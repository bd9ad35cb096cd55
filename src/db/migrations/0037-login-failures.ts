import type { Kysely } from 'kysely';

/**
 * Failed logins move from each API process's memory into the database (issue 27), so that every process behind a load
 * balancer throttles the same (account, address) pairs and accounts: a guesser gains nothing by landing on another
 * process. A row is a key's failures in a row and the time of its last one; rows older than the throttle's memory are
 * removed as failures are written.
 */
export function loginFailures() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('login_failures')
        .addColumn('key', 'varchar(400)', (c) => c.primaryKey())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('last_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('login_failures_last').on('login_failures').column('last_ms').execute();
    },
  };
}
