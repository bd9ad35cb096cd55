import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import { rebuildSqliteTable } from './sqlite-rebuild.js';

const CONSTRAINT = ', constraint "images_project_sha256" unique ("project_id", "sha256")';

/**
 * A dataset may list byte-identical images under different names, each with its own labels (issue 18): every entry
 * becomes an image, so two images of a project may share their bytes (stored once: files are content-addressed).
 * The unique constraint on (project_id, sha256) becomes a plain index; an upload of bytes the project already has is
 * still answered as a duplicate, by a lookup under the project's image-write lock (src/db/write-locks.ts).
 *
 * PostgreSQL drops the constraint in the migration's transaction. SQLite cannot drop a table constraint: the table
 * is rebuilt without it (sqlite-rebuild.ts); a rerun after a crash finds the constraint gone and only makes sure of
 * the index.
 */
export function imageBytesNotUnique(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') {
        await db.schema.alterTable('images').dropConstraint('images_project_sha256').execute();
      } else {
        await rebuildSqliteTable(db, 'images', (definition) => definition.replace(CONSTRAINT, ''));
      }
      await db.schema.createIndex('images_project_sha256').ifNotExists().on('images').columns(['project_id', 'sha256']).execute();
    },
  };
}
