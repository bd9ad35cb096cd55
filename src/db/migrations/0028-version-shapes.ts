import type { Kysely } from 'kysely';

/**
 * Versions keep every shape's extras (issue 25): an output annotation keeps its attribute values (JSON text, null when
 * it has none) and group id; a version's class keeps its keypoint skeleton and attribute specs (JSON text, null when
 * it declares none), so a version export hands writers what a project export does. The frozen source annotations are
 * JSON in `version_sources.annotations` and carry `attributes` and `group_id` there.
 */
export function versionShapes() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('version_annotations').addColumn('attributes', 'text').execute();
      await db.schema.alterTable('version_annotations').addColumn('group_id', 'integer').execute();
      await db.schema.alterTable('version_classes').addColumn('skeleton', 'text').execute();
      await db.schema.alterTable('version_classes').addColumn('attributes', 'text').execute();
    },
  };
}
