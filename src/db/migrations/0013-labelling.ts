import type { Kysely } from 'kysely';
import { withIdColumn, type DialectName } from '../dialect.js';

/**
 * Labelling: annotations gain a status (`accepted`, or `suggested` for model output a person has not accepted yet;
 * every existing annotation is accepted), and projects gain invitations for people who have no account yet.
 */
export function labelling(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('annotations').addColumn('status', 'text', (c) => c.notNull().defaultTo('accepted')).execute();
      // "This model's open suggestions on this image": what a re-run replaces and what accept-all takes.
      await db.schema.createIndex('annotations_image_status').on('annotations').columns(['image_id', 'status', 'source']).execute();

      await withIdColumn(db.schema.createTable('invitations'), dialect)
        .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        /** SHA-256 of the secret in the link; the secret itself is shown once, to the inviter. */
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('invited_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('accepted_at', 'text')
        .addColumn('accepted_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .execute();
      await db.schema.createIndex('invitations_project').on('invitations').columns(['project_id', 'id']).execute();
    },
  };
}
