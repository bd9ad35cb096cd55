import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Quality control of samples (issue 29): ground-truth samples with their reviewed class and spans frozen when marked,
 * and each annotator's own answer on a sample dealt to them (overlap and ground truth alike, as for images).
 */
export function qcSamples(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('qc_sample_ground_truth')
        .addColumn('sample_id', 'integer', (c) => c.primaryKey().references('samples.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('label', 'text')
        .addColumn('spans', 'text')
        .addColumn('marked_by', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('qc_sample_ground_truth_project').on('qc_sample_ground_truth').columns(['project_id', 'sample_id']).execute();
      await withIdColumn(db.schema.createTable('qc_sample_tasks'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('sample_id', 'integer', (c) => c.notNull().references('samples.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('label', 'text')
        .addColumn('spans', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('submitted_at', 'text')
        .execute();
      await db.schema.createIndex('qc_sample_tasks_sample_user').on('qc_sample_tasks').columns(['sample_id', 'user_id']).unique().execute();
      await db.schema.createIndex('qc_sample_tasks_project_user').on('qc_sample_tasks').columns(['project_id', 'user_id', 'id']).execute();
    },
  };
}
