import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Dataset versions: the frozen, generated copy of a project (images, annotations, classes) plus the perceptual-hash
 * cache the grouped split strategy uses. Output rows keep `source_image_id` without a foreign key: the source image
 * may be deleted later and the version must still say where each output came from.
 */
export function versions(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('versions'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('number', 'integer', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('notes', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('seed', 'bigint', (c) => c.notNull())
        .addColumn('split_config', 'text', (c) => c.notNull())
        .addColumn('preprocessing_config', 'text', (c) => c.notNull())
        .addColumn('augmentation_config', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('job_id', 'integer')
        .addColumn('image_counts', 'text', (c) => c.notNull())
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .addUniqueConstraint('versions_project_number', ['project_id', 'number'])
        .execute();

      // The frozen source: what the project looked like when the version was created (one row per source image).
      await withIdColumn(db.schema.createTable('version_sources'), dialect)
        .addColumn('version_id', 'integer', (c) => c.notNull().references('versions.id').onDelete('cascade'))
        .addColumn('source_image_id', 'integer', (c) => c.notNull())
        .addColumn('split', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('width', 'integer', (c) => c.notNull())
        .addColumn('height', 'integer', (c) => c.notNull())
        /** JSON text: [{class_name, annotation_type, geometry}] in source pixels. */
        .addColumn('annotations', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('version_sources_version').on('version_sources').columns(['version_id', 'id']).execute();
      // Image files are shared by content hash: deleting an image keeps bytes a version still reads.
      await db.schema.createIndex('version_sources_sha256').on('version_sources').column('sha256').execute();

      await withIdColumn(db.schema.createTable('version_images'), dialect)
        .addColumn('version_id', 'integer', (c) => c.notNull().references('versions.id').onDelete('cascade'))
        .addColumn('split', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('width', 'integer', (c) => c.notNull())
        .addColumn('height', 'integer', (c) => c.notNull())
        .addColumn('source_image_id', 'integer')
        .addColumn('lineage', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addUniqueConstraint('version_images_version_filename', ['version_id', 'filename'])
        .execute();
      await db.schema.createIndex('version_images_version_split').on('version_images').columns(['version_id', 'split', 'id']).execute();

      await withIdColumn(db.schema.createTable('version_annotations'), dialect)
        .addColumn('version_image_id', 'integer', (c) => c.notNull().references('version_images.id').onDelete('cascade'))
        .addColumn('class_name', 'text', (c) => c.notNull())
        .addColumn('class_index', 'integer', (c) => c.notNull())
        .addColumn('annotation_type', 'text', (c) => c.notNull())
        .addColumn('geometry', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('version_annotations_image')
        .on('version_annotations')
        .columns(['version_image_id', 'id'])
        .execute();

      await db.schema
        .createTable('version_classes')
        .addColumn('version_id', 'integer', (c) => c.notNull().references('versions.id').onDelete('cascade'))
        .addColumn('index', 'integer', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('color', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('version_classes_pk', ['version_id', 'index'])
        .execute();

      // Version numbers are never reused, even after the latest version is deleted (its blobs, exports and
      // training runs named it); the counter row also serialises concurrent creations.
      await db.schema
        .createTable('version_counters')
        .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
        .addColumn('last_number', 'integer', (c) => c.notNull())
        .execute();

      // Perceptual-hash cache for grouped splits, keyed by content so a re-upload never reuses a stale hash.
      await db.schema
        .createTable('image_phashes')
        .addColumn('image_id', 'integer', (c) => c.primaryKey().references('images.id').onDelete('cascade'))
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('dhash', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
