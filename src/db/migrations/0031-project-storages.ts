import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Project storages (issue 27): S3-compatible buckets attached to a project as a source of images (imported by
 * reference or by copy, synced on demand and on a schedule) or as a target of exports and version files. Credentials
 * are stored sealed (src/lib/secret-box.ts). `storage_objects` is what a source's syncs have seen, one row per object
 * key: its ETag when imported (a new ETag is a new object), the image it became, and when it went missing.
 */
export function projectStorages(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('project_storages'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('region', 'text', (c) => c.notNull())
        .addColumn('force_path_style', 'integer', (c) => c.notNull())
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('credentials', 'text', (c) => c.notNull())
        .addColumn('access_key_hint', 'text', (c) => c.notNull())
        .addColumn('import_mode', 'text', (c) => c.notNull())
        .addColumn('sync_interval_minutes', 'integer')
        .addColumn('next_sync_at', 'text')
        .addColumn('sync_job_id', 'integer')
        .addColumn('sync_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_sync_at', 'text')
        .addColumn('last_sync_status', 'text')
        .addColumn('last_sync_error', 'text')
        .addColumn('last_sync', 'text')
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('project_storages_project_name', ['project_id', 'name'])
        .execute();
      await db.schema.createIndex('project_storages_next_sync').on('project_storages').column('next_sync_at').execute();
      await withIdColumn(db.schema.createTable('storage_objects'), dialect)
        .addColumn('storage_id', 'integer', (c) => c.notNull().references('project_storages.id').onDelete('cascade'))
        .addColumn('object_key', 'text', (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('detail', 'text')
        .addColumn('image_id', 'integer', (c) => c.references('images.id').onDelete('set null'))
        .addColumn('seen_sync', 'integer', (c) => c.notNull())
        .addColumn('imported_at', 'text', (c) => c.notNull())
        .addColumn('missing_since', 'text')
        .addUniqueConstraint('storage_objects_storage_key', ['storage_id', 'object_key'])
        .execute();
      await db.schema.createIndex('storage_objects_image').on('storage_objects').column('image_id').execute();
    },
  };
}
