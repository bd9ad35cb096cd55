import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

export function foundation(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const table = (name: string) => withIdColumn(db.schema.createTable(name), dialect);

      await table('users')
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await table('tokens')
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema.createIndex('tokens_user').on('tokens').columns(['user_id', 'kind']).execute();

      await table('projects')
        .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('project_type', 'text', (c) => c.notNull())
        .addColumn('location', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('image_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('annotated_image_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('annotation_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('class_count', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('projects_owner').on('projects').column('owner_id').execute();

      await table('classes')
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('color', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('classes_project_name', ['project_id', 'name'])
        .execute();

      await table('images')
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('original_name', 'text', (c) => c.notNull())
        .addColumn('width', 'integer', (c) => c.notNull())
        .addColumn('height', 'integer', (c) => c.notNull())
        .addColumn('split', 'text')
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'integer', (c) => c.notNull())
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('thumbnail_key', 'text', (c) => c.notNull())
        .addColumn('annotation_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('images_project_filename', ['project_id', 'filename'])
        .addUniqueConstraint('images_project_sha256', ['project_id', 'sha256'])
        .execute();
      await db.schema.createIndex('images_project_id').on('images').columns(['project_id', 'id']).execute();
      await db.schema.createIndex('images_project_split_id').on('images').columns(['project_id', 'split', 'id']).execute();

      await table('annotations')
        .addColumn('image_id', 'integer', (c) => c.notNull().references('images.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('class_id', 'integer', (c) => c.notNull().references('classes.id'))
        .addColumn('annotation_type', 'text', (c) => c.notNull())
        .addColumn('geometry', 'text', (c) => c.notNull())
        .addColumn('confidence', 'double precision')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('annotations_image').on('annotations').columns(['image_id', 'id']).execute();
      await db.schema.createIndex('annotations_class').on('annotations').column('class_id').execute();
      await db.schema.createIndex('annotations_project').on('annotations').columns(['project_id', 'id']).execute();

      await table('jobs')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0))
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('error', 'text')
        .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'id']).execute();

      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
