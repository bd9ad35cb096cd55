import type { Kysely } from 'kysely';

/**
 * Quality features and dHashes are now measured on the pixels a thumbnail is encoded from (at ingest, with no
 * decode), not on the decoded WebP thumbnail. Entries measured the old way are dropped so that every image of a
 * project is measured by the same definition (exact pixel duplicates compare hashes of the same pixels); the next
 * quality report or grouped split measures them again from the stored files.
 */
export function remeasureImages() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.deleteFrom('image_features').execute();
      await db.deleteFrom('image_phashes').execute();
    },
  };
}
