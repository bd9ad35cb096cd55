import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/** The tables whose rows a project's profile is computed from. */
export const REVISED_TABLES = ['images', 'annotations', 'classes', 'samples'] as const;

/**
 * A project's data revision: a number that grows with every committed change to its images, annotations, classes or
 * samples, kept by database triggers, so no write path (today's or a future one, a job's or a cleaning run's) can
 * forget it. What is computed from a project's rows (its profile) is kept while the revision it was computed at is
 * still the current one (src/modules/profile/profile-parts.service.ts; per part since migration 0019).
 *
 * The revision is the sum of `revision` over the project's rows of `project_revisions`:
 * - SQLite has one writer at a time: one row per project, incremented by a trigger for each row written.
 * - On PostgreSQL, incrementing one row would make every transaction that writes to a project wait on that row, and
 *   could deadlock two that touched other rows first. A trigger per statement inserts a row of weight 1 instead
 *   (inserts never wait on each other); readers fold the rows into one now and then, in one transaction, which keeps
 *   the sum.
 * Rows written for a project that is being deleted are skipped (the trigger checks that the project exists).
 */
export function projectRevisions(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`create table project_revisions (
          project_id integer not null references projects (id) on delete cascade,
          revision bigint not null)`.execute(db);
        await sql`create index project_revisions_project on project_revisions (project_id)`.execute(db);
        await sql.raw(`create function versa_project_revision() returns trigger language plpgsql as $$
          begin
            if tg_op in ('INSERT', 'UPDATE') then
              insert into project_revisions (project_id, revision)
                select distinct n.project_id, 1 from new_rows n where exists (select 1 from projects p where p.id = n.project_id);
            end if;
            if tg_op in ('UPDATE', 'DELETE') then
              insert into project_revisions (project_id, revision)
                select distinct o.project_id, 1 from old_rows o where exists (select 1 from projects p where p.id = o.project_id);
            end if;
            return null;
          end $$`).execute(db);
        for (const table of REVISED_TABLES) {
          for (const [event, referencing] of [
            ['insert', 'new table as new_rows'],
            ['update', 'old table as old_rows new table as new_rows'],
            ['delete', 'old table as old_rows'],
          ]) {
            await sql.raw(`create trigger ${table}_revision_${event} after ${event} on ${table} referencing ${referencing} for each statement execute function versa_project_revision()`).execute(db);
          }
        }
        return;
      }
      await sql`create table project_revisions (
        project_id integer primary key references projects (id) on delete cascade,
        revision integer not null)`.execute(db);
      const bump = (row: 'new' | 'old') => `insert into project_revisions (project_id, revision)
            select ${row}.project_id, 1 where exists (select 1 from projects where id = ${row}.project_id)
            on conflict (project_id) do update set revision = revision + 1;`;
      for (const table of REVISED_TABLES) {
        await sql.raw(`create trigger ${table}_revision_insert after insert on ${table} begin ${bump('new')} end`).execute(db);
        await sql.raw(`create trigger ${table}_revision_update after update on ${table} begin ${bump('new')} ${bump('old')} end`).execute(db);
        await sql.raw(`create trigger ${table}_revision_delete after delete on ${table} begin ${bump('old')} end`).execute(db);
      }
    },
  };
}
