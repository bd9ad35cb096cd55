import type { Kysely } from 'kysely';

/**
 * A project being imported is `importing` until its last row is written; then its counters and `ready` are set in
 * one transaction. Readers see only `ready` projects, so a killed import never shows half a project, and the
 * start-up recovery removes importing projects whose importer stopped beating.
 */
export function projectStatus() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('projects').addColumn('status', 'text', (col) => col.notNull().defaultTo('ready')).execute();
      await db.schema.createIndex('projects_status').on('projects').columns(['status', 'updated_at']).execute();
    },
  };
}
