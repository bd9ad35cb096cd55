import { sql, type Kysely } from 'kysely';

/**
 * Suggestions are not annotations until someone accepts them (issue 28): the image and project counters
 * (annotation_count, annotated_image_count, and through them /api/stats, "annotated" filters and next-to-label's
 * unlabelled pool) count accepted annotations only. Recomputes what earlier model runs counted.
 */
export function countAcceptedAnnotations() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db
        .updateTable('images')
        .set({ annotation_count: sql`(select count(*) from annotations where annotations.image_id = images.id and annotations.status = 'accepted')` })
        .where(sql<boolean>`exists (select 1 from annotations where annotations.image_id = images.id and annotations.status <> 'accepted')`)
        .execute();
      await db
        .updateTable('projects')
        .set({
          annotated_image_count: sql`(select count(*) from images where images.project_id = projects.id and images.annotation_count > 0)`,
          annotation_count: sql`(select coalesce(sum(annotation_count), 0) from images where images.project_id = projects.id)`,
        })
        .where(sql<boolean>`exists (select 1 from annotations where annotations.project_id = projects.id and annotations.status <> 'accepted')`)
        .execute();
    },
  };
}
