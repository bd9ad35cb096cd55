import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

const CONSTRAINT = ', constraint "images_project_sha256" unique ("project_id", "sha256")';

/**
 * A dataset may list byte-identical images under different names, each with its own labels (issue 18): every entry
 * becomes an image, so two images of a project may share their bytes (stored once: files are content-addressed).
 * The unique constraint on (project_id, sha256) becomes a plain index; an upload of bytes the project already has is
 * still answered as a duplicate, by a lookup under the project's image-write lock (src/db/write-locks.ts).
 *
 * PostgreSQL drops the constraint in the migration's transaction. SQLite cannot drop a table constraint: the table
 * is rebuilt (https://www.sqlite.org/lang_altertable.html#otheralter) with foreign keys off, since dropping `images`
 * with them on would delete every annotation, assignment, review and revision by cascade. The migrator runs SQLite
 * migrations outside a transaction, so the pragma takes effect; the rebuild itself is one transaction, checked with
 * `foreign_key_check` before it commits, and a rerun after a crash finds the constraint gone and only makes sure of
 * the index.
 */
export function imageBytesNotUnique(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') {
        await db.schema.alterTable('images').dropConstraint('images_project_sha256').execute();
        await db.schema.createIndex('images_project_sha256').on('images').columns(['project_id', 'sha256']).execute();
        return;
      }
      await sql`pragma foreign_keys = off`.execute(db);
      try {
        await db.transaction().execute(rebuildWithoutConstraint);
      } finally {
        await sql`pragma foreign_keys = on`.execute(db);
      }
    },
  };
}

async function rebuildWithoutConstraint(trx: Kysely<any>): Promise<void> {
  const table = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'images'`.execute(trx);
  const create = table.rows[0]?.sql;
  if (!create) throw new Error('table images not found');
  if (create.includes(CONSTRAINT)) {
    const prefix = 'CREATE TABLE "images" (';
    if (!create.startsWith(prefix)) throw new Error(`unexpected definition of table images: ${create}`);
    const indexes = await sql<{ sql: string }>`
      select sql from sqlite_master where type = 'index' and tbl_name = 'images' and sql is not null order by name`.execute(trx);
    const sequence = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'images'`.execute(trx);

    await sql.raw(`CREATE TABLE "images_rebuilt" (${create.slice(prefix.length).replace(CONSTRAINT, '')}`).execute(trx);
    await sql`insert into images_rebuilt select * from images`.execute(trx);
    await sql`drop table images`.execute(trx);
    await sql`alter table images_rebuilt rename to images`.execute(trx);
    for (const index of indexes.rows) await sql.raw(index.sql).execute(trx);
    // Ids of deleted images are not handed out again (revisions and jobs may still name them): the rebuilt table's
    // counter is the old one, not the highest id left.
    const seq = sequence.rows[0]?.seq;
    if (seq !== undefined) {
      await sql`delete from sqlite_sequence where name = 'images'`.execute(trx);
      await sql`insert into sqlite_sequence (name, seq) values ('images', ${seq})`.execute(trx);
    }
  }
  await trx.schema.createIndex('images_project_sha256').ifNotExists().on('images').columns(['project_id', 'sha256']).execute();
  const broken = await sql<{ table: string; parent: string }>`pragma foreign_key_check`.execute(trx);
  const toImages = broken.rows.filter((row) => row.parent === 'images');
  if (toImages.length > 0) throw new Error(`rows of ${[...new Set(toImages.map((r) => r.table))].join(', ')} refer to missing images`);
}
