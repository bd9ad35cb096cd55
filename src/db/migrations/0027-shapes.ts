import type { Kysely } from 'kysely';

/**
 * Every shape other tools hold (issue 25): an annotation may carry attribute values (JSON text `{name: value}`,
 * null when it has none) and a group id (shapes of one object, CVAT groups); a class may declare a keypoint
 * skeleton and attribute specs (JSON text, null when it declares none). The new shape types need no column: they
 * are `annotation_type` values with their geometry in `geometry`.
 */
export function shapes() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('annotations').addColumn('attributes', 'text').execute();
      await db.schema.alterTable('annotations').addColumn('group_id', 'integer').execute();
      await db.schema.alterTable('classes').addColumn('skeleton', 'text').execute();
      await db.schema.alterTable('classes').addColumn('attributes', 'text').execute();
    },
  };
}
