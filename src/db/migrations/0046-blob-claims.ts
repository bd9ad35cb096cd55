import type { Kysely } from 'kysely';

/**
 * Claims on content-addressed blobs move from each process's memory into the database (issue 27): two API processes
 * that store the same bytes write the same key, and the one whose request then fails must not remove the file while
 * the other's row is about to commit; a delete must not run while another process is writing the key. A row is one
 * holder's claim on one key: `write` while a request writes and records it, `delete` while a removal checks and
 * deletes it (src/storage/blob-claims.ts says how the two meet). `expires_ms` lets a crashed holder's rows be ignored
 * and removed.
 */
export function blobClaims() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('blob_claims')
        .addColumn('blob_key', 'varchar(512)', (c) => c.notNull())
        .addColumn('holder', 'varchar(40)', (c) => c.notNull())
        .addColumn('kind', 'varchar(8)', (c) => c.notNull())
        .addColumn('expires_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('blob_claims_pk', ['blob_key', 'holder'])
        .execute();
      await db.schema.createIndex('blob_claims_expires').on('blob_claims').column('expires_ms').execute();
    },
  };
}
