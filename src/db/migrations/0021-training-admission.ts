import { sql, type Kysely } from 'kysely';

/**
 * Training runs wait for a slot of their project before they reach the job queue (issue 24: one account's runs filled
 * the one instance-wide queue). `admitted_at` is when a run was handed to the queue; null while it waits. Runs made
 * before this were all handed over when they were made.
 */
export function trainingAdmission() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('experiments').addColumn('admitted_at', 'text').execute();
      await sql`update experiments set admitted_at = created_at`.execute(db);
    },
  };
}
