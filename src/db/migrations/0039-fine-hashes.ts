import type { Kysely } from 'kysely';

/**
 * A finer perceptual hash beside the 64-bit dHash (issue 30, item 5): 256 bits on a 16 × 16 grid, which confirms the
 * 64-bit hash's near-duplicate candidates. Null until measured: images stored before this are measured again, lazily,
 * the first time a report needs them.
 */
export function fineHashes() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('image_phashes').addColumn('fine', 'varchar(64)').execute();
    },
  };
}
