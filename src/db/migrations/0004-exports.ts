import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/** Export files: the download route serves only names recorded here, to callers who may read the project. */
export function exportsMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('exports'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        // No foreign key: deleting a version is refused while an export references it (the versions module asks).
        .addColumn('version_id', 'integer')
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull().unique())
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('image_count', 'integer', (c) => c.notNull())
        .addColumn('annotation_count', 'integer', (c) => c.notNull())
        .addColumn('include_unannotated', 'integer', (c) => c.notNull())
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('exports_project').on('exports').columns(['project_id', 'id']).execute();
      await db.schema.createIndex('exports_version').on('exports').column('version_id').execute();
    },
  };
}
