import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { rebuildSqliteTable } from '../../src/db/migrations/sqlite-rebuild.js';

/**
 * A SQLite table rebuild keeps what hangs on the table: its indexes and its triggers. Dropping the old table drops
 * its triggers, so before this a rebuild of `images` would have silently removed migration 0048's quality-control
 * queue triggers, and new images of a project with quality control would no longer be queued.
 */
describe('rebuildSqliteTable', () => {
  it('keeps the table\'s rows, indexes and triggers', async () => {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    try {
      await sql`create table "items" (id integer primary key autoincrement, name text not null unique)`.execute(db);
      await sql`create table queue (item_id integer primary key)`.execute(db);
      await sql`create index items_name on items (name)`.execute(db);
      await sql`create trigger items_queue after insert on items begin insert into queue (item_id) values (new.id); end`.execute(db);
      await sql`insert into items (name) values ('a')`.execute(db);

      await rebuildSqliteTable(db, 'items', (definition) => definition.replace('name text not null unique', 'name text not null'));

      const objects = await sql<{ type: string; name: string }>`select type, name from sqlite_master where tbl_name = 'items' and sql is not null order by name`.execute(db);
      assert.deepEqual(objects.rows.map((o) => `${o.type} ${o.name}`), ['table items', 'index items_name', 'trigger items_queue']);
      await sql`insert into items (name) values ('a')`.execute(db); // the unique constraint is gone, as edited
      const queued = await sql<{ item_id: number }>`select item_id from queue order by item_id`.execute(db);
      assert.deepEqual(queued.rows.map((r) => r.item_id), [1, 2], 'the trigger still fires after the rebuild');
    } finally {
      await db.destroy();
    }
  });
});
