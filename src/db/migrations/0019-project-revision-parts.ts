import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import { REVISED_TABLES } from './0018-project-revisions.js';

/** An image's part: its id shifted right by PART_BITS (1,024 consecutive image ids per part). */
export const PART_BITS = 10;
/** The part of a project's rows that are not images' (classes, samples). */
export const PROJECT_PART = -1;

/** Each revised table's part of a row (`r` is the row's alias). */
const PART_OF: Record<(typeof REVISED_TABLES)[number], (r: string) => string> = {
  images: (r) => `${r}.id >> ${PART_BITS}`,
  annotations: (r) => `${r}.image_id >> ${PART_BITS}`,
  classes: () => `${PROJECT_PART}`,
  samples: () => `${PROJECT_PART}`,
};

/**
 * Migration 0018's project data revision, split into parts: one revision per 1,024 consecutive image ids (an image's
 * row and its annotations' rows), and one for the rest of the project (classes, samples). What is computed from a
 * project's rows (its profile) is then kept per part, and a change recomputes only the parts it touched: a
 * million-annotation profile after an edit costs the few thousand annotations of one part, not all of them.
 *
 * The table keeps migration 0018's scheme per (project, part): SQLite one row incremented per written row, PostgreSQL a
 * row of weight 1 per writing statement and part, folded by readers. Every existing image part starts with a row, so
 * the image parts holding data are exactly the image parts with rows (the project part is always there, 0 without rows).
 *
 * `profile_parts` keeps each computed part (JSON) with the revision it was computed at, so that a restarted server
 * computes only the parts that changed since, not the whole project again.
 */
export function projectRevisionParts(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (const table of REVISED_TABLES) {
        for (const event of ['insert', 'update', 'delete']) await sql.raw(`drop trigger ${table}_revision_${event}${dialect === 'postgres' ? ` on ${table}` : ''}`).execute(db);
      }
      await sql`drop table project_revisions`.execute(db);
      if (dialect === 'postgres') {
        await sql`drop function versa_project_revision()`.execute(db);
        await sql`create table project_revisions (
          project_id integer not null references projects (id) on delete cascade,
          part integer not null,
          revision bigint not null)`.execute(db);
        await sql`create index project_revisions_project on project_revisions (project_id, part)`.execute(db);
      } else {
        await sql`create table project_revisions (
          project_id integer not null references projects (id) on delete cascade,
          part integer not null,
          revision integer not null,
          primary key (project_id, part))`.execute(db);
      }
      await sql.raw(`insert into project_revisions (project_id, part, revision) select project_id, ${PART_OF.images('images')}, 1 from images group by 1, 2`).execute(db);
      // The computed parts, kept across restarts: each with the revision it was computed at (src/modules/profile/profile-parts.service.ts).
      await db.schema
        .createTable('profile_parts')
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('part', 'integer', (c) => c.notNull())
        .addColumn('revision', 'bigint', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('profile_parts_pk', ['project_id', 'part'])
        .execute();

      if (dialect === 'postgres') {
        for (const table of REVISED_TABLES) {
          const rows = (alias: string, transition: string) => `insert into project_revisions (project_id, part, revision)
                select distinct ${alias}.project_id, ${PART_OF[table](alias)}, 1 from ${transition} ${alias}
                where exists (select 1 from projects p where p.id = ${alias}.project_id);`;
          await sql.raw(`create function versa_${table}_revision() returns trigger language plpgsql as $$
            begin
              if tg_op in ('INSERT', 'UPDATE') then ${rows('n', 'new_rows')} end if;
              if tg_op in ('UPDATE', 'DELETE') then ${rows('o', 'old_rows')} end if;
              return null;
            end $$`).execute(db);
          for (const [event, referencing] of [
            ['insert', 'new table as new_rows'],
            ['update', 'old table as old_rows new table as new_rows'],
            ['delete', 'old table as old_rows'],
          ]) {
            await sql.raw(`create trigger ${table}_revision_${event} after ${event} on ${table} referencing ${referencing} for each statement execute function versa_${table}_revision()`).execute(db);
          }
        }
        return;
      }
      for (const table of REVISED_TABLES) {
        const bump = (row: 'new' | 'old') => `insert into project_revisions (project_id, part, revision)
            select ${row}.project_id, ${PART_OF[table](row)}, 1 where exists (select 1 from projects where id = ${row}.project_id)
            on conflict (project_id, part) do update set revision = revision + 1;`;
        await sql.raw(`create trigger ${table}_revision_insert after insert on ${table} begin ${bump('new')} end`).execute(db);
        await sql.raw(`create trigger ${table}_revision_update after update on ${table} begin ${bump('new')} ${bump('old')} end`).execute(db);
        await sql.raw(`create trigger ${table}_revision_delete after delete on ${table} begin ${bump('old')} end`).execute(db);
      }
    },
  };
}
