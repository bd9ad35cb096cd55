import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Teams: organizations and their members, project members, image assignments, reviews, soft locks and annotation
 * revisions; projects may belong to an organization, images carry their review state, tokens their scope.
 */
export function teams(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await withIdColumn(db.schema.createTable('orgs'), dialect)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('org_members')
        .addColumn('org_id', 'integer', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('org_members_pk', ['org_id', 'user_id'])
        .execute();
      await db.schema.createIndex('org_members_user').on('org_members').column('user_id').execute();

      await db.schema.alterTable('projects').addColumn('org_id', 'integer', (c) => c.references('orgs.id').onDelete('set null')).execute();
      await db.schema.alterTable('projects').addColumn('assigned_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('projects_org').on('projects').column('org_id').execute();

      await db.schema
        .createTable('project_members')
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('project_members_pk', ['project_id', 'user_id'])
        .execute();
      await db.schema.createIndex('project_members_user').on('project_members').column('user_id').execute();

      await db.schema.alterTable('images').addColumn('review_state', 'text', (c) => c.notNull().defaultTo('unreviewed')).execute();
      await db.schema.createIndex('images_project_review_id').on('images').columns(['project_id', 'review_state', 'id']).execute();

      await withIdColumn(db.schema.createTable('assignments'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('image_id', 'integer', (c) => c.notNull().references('images.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('assigned_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        // One assignee per image: assigning again moves the image.
        .addUniqueConstraint('assignments_image', ['image_id'])
        .execute();
      await db.schema.createIndex('assignments_project_user').on('assignments').columns(['project_id', 'user_id', 'image_id']).execute();
      await db.schema.createIndex('assignments_user').on('assignments').columns(['user_id', 'id']).execute();

      await withIdColumn(db.schema.createTable('reviews'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('image_id', 'integer', (c) => c.notNull().references('images.id').onDelete('cascade'))
        .addColumn('submitted_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('decided_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('decided_at', 'text')
        .addColumn('decision_comment', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('reviews_project_status').on('reviews').columns(['project_id', 'status', 'id']).execute();
      await db.schema.createIndex('reviews_image').on('reviews').columns(['image_id', 'id']).execute();
      await db.schema.createIndex('reviews_submitter').on('reviews').columns(['submitted_by', 'status']).execute();

      await db.schema
        .createTable('image_locks')
        .addColumn('image_id', 'integer', (c) => c.primaryKey().references('images.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('acquired_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();

      await withIdColumn(db.schema.createTable('revisions'), dialect)
        // No foreign key to annotations: the history outlives a deleted annotation (which a revert can bring back).
        .addColumn('annotation_id', 'integer', (c) => c.notNull())
        .addColumn('image_id', 'integer', (c) => c.notNull().references('images.id').onDelete('cascade'))
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('revisions_annotation').on('revisions').columns(['annotation_id', 'id']).execute();
      await db.schema.createIndex('revisions_image').on('revisions').columns(['image_id', 'id']).execute();

      await db.schema.alterTable('tokens').addColumn('scope', 'text', (c) => c.notNull().defaultTo('read-write')).execute();
    },
  };
}
