import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/** The queue tables and the rows they queue (migrations 0040 and 0047). */
const QUEUES = [
  { items: 'images', queue: 'qc_queue', key: 'image_id' },
  { items: 'samples', queue: 'qc_sample_queue', key: 'sample_id' },
] as const;

/**
 * Queues an image or sample in the same transaction that inserts it, when its project has quality-control settings
 * (issue 29). The queue's window (`queued_through`) takes ids as they were committed when it was filled; on
 * PostgreSQL a transaction that commits later with a lower id (a long import, a cleaning run put back) fell below
 * that mark and was never queued. Inserting the queue row with the item closes that gap on every write path. The
 * shuffle key is the repositories' (src/modules/quality-control/*.repository.ts).
 */
export function qcQueueOnInsert(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      for (const { items, queue, key } of QUEUES) {
        const shuffle = (row: string) => `((${row}.id * 2654435761) % 4294967291)`;
        if (dialect === 'postgres') {
          await sql.raw(`create function versa_${queue}_on_insert() returns trigger language plpgsql as $$
            begin
              insert into ${queue} (${key}, project_id, shuffle_key)
                select n.id, n.project_id, ${shuffle('n')} from new_rows n
                where exists (select 1 from qc_settings s where s.project_id = n.project_id)
                on conflict (${key}) do nothing;
              return null;
            end $$`).execute(db);
          await sql.raw(`create trigger ${items}_${queue} after insert on ${items} referencing new table as new_rows for each statement execute function versa_${queue}_on_insert()`).execute(db);
        } else {
          await sql.raw(`create trigger ${items}_${queue} after insert on ${items}
            when exists (select 1 from qc_settings where project_id = new.project_id)
            begin insert into ${queue} (${key}, project_id, shuffle_key) values (new.id, new.project_id, ${shuffle('new')}) on conflict (${key}) do nothing; end`).execute(db);
        }
      }
    },
  };
}
