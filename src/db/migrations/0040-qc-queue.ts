import type { Kysely } from 'kysely';

/**
 * The overlap queue of quality control (issue 29): the images of a project that may still be dealt (unreviewed, fewer
 * versions than the overlap), each with a stored shuffle key, indexed in that order, so that "next task" walks the
 * index from its start and stops at the first image the annotator has not had, instead of ordering every image of the
 * project per request. An image leaves the queue when its last slot is dealt. `qc_settings.queued_through` is the
 * highest image id queued so far: the queue takes the project's images a window at a time, when it runs dry for an
 * annotator (images uploaded later with them).
 */
export function qcQueue() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('qc_queue')
        .addColumn('image_id', 'integer', (c) => c.primaryKey().references('images.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('shuffle_key', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('qc_queue_order').on('qc_queue').columns(['project_id', 'shuffle_key', 'image_id']).execute();
      await db.schema.alterTable('qc_settings').addColumn('queued_through', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
