import { sql, type Kysely } from 'kysely';

/**
 * A classification project chooses single- or multi-label (issue 30, item 7): in single-label a class key replaces
 * the image's class, in multi-label it toggles one of several. New projects are single-label; an existing
 * classification project where some image already holds two classes keeps the editor's old toggling (multi-label).
 */
export function multiLabel() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('projects').addColumn('multi_label', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db
        .updateTable('projects')
        .set({ multi_label: 1 })
        .where('project_type', '=', 'classification')
        .where(
          sql<boolean>`exists (select 1 from annotations where annotations.project_id = projects.id and annotations.annotation_type = 'classification' group by annotations.image_id having count(distinct annotations.class_id) > 1)`,
        )
        .execute();
    },
  };
}
