import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Data quality: per-image features (computed once from the upload's thumbnail, valid while `sha256` matches the
 * image's) and cleaning runs with what each changed, so a run can be reverted as a whole.
 */
export function quality(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('image_features')
        .addColumn('image_id', 'integer', (c) => c.primaryKey().references('images.id').onDelete('cascade'))
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('readable', 'integer', (c) => c.notNull())
        .addColumn('truncated', 'integer', (c) => c.notNull())
        .addColumn('blur', 'double precision', (c) => c.notNull())
        .addColumn('brightness', 'double precision', (c) => c.notNull())
        .addColumn('entropy', 'double precision', (c) => c.notNull())
        .addColumn('grayscale', 'integer', (c) => c.notNull())
        .addColumn('pixel_hash', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('image_features_pixel_hash').on('image_features').column('pixel_hash').execute();

      await withIdColumn(db.schema.createTable('cleaning_runs'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('actions', 'text', (c) => c.notNull())
        .addColumn('summary', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revertible_until', 'text', (c) => c.notNull())
        .addColumn('reverted_at', 'text')
        .addColumn('reverted_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .execute();
      await db.schema.createIndex('cleaning_runs_project').on('cleaning_runs').columns(['project_id', 'id']).execute();

      await withIdColumn(db.schema.createTable('cleaning_run_records'), dialect)
        .addColumn('run_id', 'integer', (c) => c.notNull().references('cleaning_runs.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('ref_id', 'integer', (c) => c.notNull())
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .execute();
      await db.schema.createIndex('cleaning_run_records_run').on('cleaning_run_records').columns(['run_id', 'id']).execute();
    },
  };
}
