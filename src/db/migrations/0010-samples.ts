import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Samples of the non-image modalities (text, tabular, audio, video, LLM records): one row each with its data and
 * labels as JSON text, media bytes in the blob store; their editing locks and label history; sample counters on
 * projects (kept in the transaction of every write, like the image counters).
 */
export function samples(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('samples'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('modality', 'text', (c) => c.notNull())
        .addColumn('split', 'text')
        .addColumn('data', 'text', (c) => c.notNull())
        // The single class of the sample (indexed for the listing's filter); multi-label samples keep all in `labels`.
        .addColumn('label', 'text')
        .addColumn('labels', 'text')
        .addColumn('spans', 'text')
        .addColumn('value', 'text')
        .addColumn('metadata', 'text')
        .addColumn('labelled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('blob_key', 'text')
        .addColumn('sha256', 'text')
        .addColumn('review_state', 'text', (c) => c.notNull().defaultTo('unreviewed'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('samples_project_id').on('samples').columns(['project_id', 'id']).execute();
      await db.schema.createIndex('samples_project_modality_id').on('samples').columns(['project_id', 'modality', 'id']).execute();
      await db.schema.createIndex('samples_project_split_id').on('samples').columns(['project_id', 'split', 'id']).execute();
      await db.schema.createIndex('samples_project_label_id').on('samples').columns(['project_id', 'label', 'id']).execute();

      await db.schema
        .createTable('sample_locks')
        .addColumn('sample_id', 'integer', (c) => c.primaryKey().references('samples.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('acquired_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();

      await withIdColumn(db.schema.createTable('sample_revisions'), dialect)
        .addColumn('sample_id', 'integer', (c) => c.notNull().references('samples.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sample_revisions_sample').on('sample_revisions').columns(['sample_id', 'id']).execute();

      // The column layout of a project's tabular samples (the first tabular import fixes it; later ones must match).
      await db.schema
        .createTable('sample_schemas')
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('modality', 'text', (c) => c.notNull())
        .addColumn('schema', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('sample_schemas_pk', ['project_id', 'modality'])
        .execute();

      await db.schema.alterTable('projects').addColumn('sample_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('projects').addColumn('labelled_sample_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
