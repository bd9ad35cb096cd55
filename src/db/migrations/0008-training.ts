import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Training: jobs gain a message, an ETA and a cancel request (polled by whichever process runs the job); experiments
 * record every training run; models name the experiment and version they came from, with their metrics.
 */
export function training(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('jobs').addColumn('message', 'text').execute();
      await db.schema.alterTable('jobs').addColumn('eta_seconds', 'real').execute();
      await db.schema.alterTable('jobs').addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0)).execute();

      await withIdColumn(db.schema.createTable('experiments'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('version_id', 'integer', (c) => c.references('versions.id').onDelete('set null'))
        .addColumn('job_id', 'integer')
        .addColumn('model_id', 'integer')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('notes', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('adapter', 'text', (c) => c.notNull())
        .addColumn('params', 'text', (c) => c.notNull())
        .addColumn('metrics', 'text', (c) => c.notNull())
        .addColumn('history', 'text', (c) => c.notNull())
        .addColumn('per_class', 'text', (c) => c.notNull())
        .addColumn('extra', 'text', (c) => c.notNull())
        .addColumn('best_epoch', 'integer')
        .addColumn('epoch', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('run_dir', 'text')
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('duration_s', 'real')
        .execute();
      await db.schema.createIndex('experiments_project').on('experiments').columns(['project_id', 'id']).execute();
      await db.schema.createIndex('experiments_job').on('experiments').columns(['job_id']).execute();

      await db.schema.alterTable('models').addColumn('experiment_id', 'integer').execute();
      await db.schema.alterTable('models').addColumn('trained_version_id', 'integer').execute();
      await db.schema.alterTable('models').addColumn('metrics', 'text').execute();
    },
  };
}
