import { sql, type Kysely } from 'kysely';

/**
 * A change SQLite's ALTER TABLE cannot make (drop a constraint, add a stored generated column), made the documented
 * way (https://www.sqlite.org/lang_altertable.html#otheralter): with foreign keys off, in one transaction, the table
 * is created again from its edited definition, its rows copied, the old table dropped and the new one renamed, its
 * indexes and triggers recreated (dropping a table drops its triggers: migration 0048's queue triggers, say) and its id counter kept (ids of deleted rows are not handed out again: revisions and jobs may
 * still name them). `foreign_key_check` runs before the commit. Foreign keys must be off, or dropping the old table
 * would delete by cascade every row that refers to it; the migrator runs SQLite migrations outside a transaction, so
 * the pragma takes effect.
 *
 * `edit` returns the new definition, or the same text when the table already has the change (a rerun after a crash
 * then changes nothing).
 */
export async function rebuildSqliteTable(db: Kysely<any>, table: string, edit: (definition: string) => string): Promise<void> {
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      const found = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(trx);
      const definition = found.rows[0]?.sql;
      if (!definition) throw new Error(`table ${table} not found`);
      const edited = edit(definition);
      if (edited === definition) return;
      const prefix = `CREATE TABLE "${table}" (`;
      if (!edited.startsWith(prefix)) throw new Error(`unexpected definition of table ${table}: ${definition}`);
      const indexes = await sql<{ sql: string }>`
        select sql from sqlite_master where type in ('index', 'trigger') and tbl_name = ${table} and sql is not null order by type, name`.execute(trx);
      const sequence = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(trx);
      // The stored columns only: generated ones are computed again by the new table.
      const stored = await sql<{ name: string }>`select name from pragma_table_xinfo(${table}) where hidden = 0 order by cid`.execute(trx);
      const columns = stored.rows.map((c) => `"${c.name}"`).join(', ');
      const rebuilt = `${table}_rebuilt`;

      await sql.raw(`CREATE TABLE "${rebuilt}" (${edited.slice(prefix.length)}`).execute(trx);
      await sql.raw(`insert into "${rebuilt}" (${columns}) select ${columns} from "${table}"`).execute(trx);
      await sql.raw(`drop table "${table}"`).execute(trx);
      await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(trx);
      for (const index of indexes.rows) await sql.raw(index.sql).execute(trx);
      const seq = sequence.rows[0]?.seq;
      if (seq !== undefined) {
        await sql`delete from sqlite_sequence where name = ${table}`.execute(trx);
        await sql`insert into sqlite_sequence (name, seq) values (${table}, ${seq})`.execute(trx);
      }
      const broken = await sql<{ table: string; parent: string }>`pragma foreign_key_check`.execute(trx);
      const referring = broken.rows.filter((row) => row.parent === table);
      if (referring.length > 0) throw new Error(`rows of ${[...new Set(referring.map((r) => r.table))].join(', ')} refer to missing ${table}`);
    });
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
