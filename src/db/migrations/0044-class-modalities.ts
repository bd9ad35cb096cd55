import type { Kysely } from 'kysely';

/**
 * The modalities a class is for (issue 30, item 10): JSON text of a list of modality names (`image`, `text`,
 * `tabular`, …), null for every modality, which every class made before this is. A sample page offers only the
 * classes of its modality, so a tabular target no longer offers text span classes.
 */
export function classModalities() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('classes').addColumn('modalities', 'varchar(200)').execute();
    },
  };
}
