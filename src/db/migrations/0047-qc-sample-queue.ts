import type { Kysely } from 'kysely';

/**
 * The overlap queue of samples (issue 29), as `qc_queue` is for images (migration 0040): the samples that may still be
 * dealt, each under its stored shuffle key, indexed in dealing order, so that "next task" walks the index instead of
 * ordering every sample of the project per request. `qc_settings.samples_queued_through` is the highest sample id
 * queued so far.
 */
export function qcSampleQueue() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('qc_sample_queue')
        .addColumn('sample_id', 'integer', (c) => c.primaryKey().references('samples.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('shuffle_key', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('qc_sample_queue_order').on('qc_sample_queue').columns(['project_id', 'shuffle_key', 'sample_id']).execute();
      await db.schema.alterTable('qc_settings').addColumn('samples_queued_through', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
