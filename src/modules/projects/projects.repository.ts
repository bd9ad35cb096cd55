import { sql, type Insertable, type SqlBool, type Updateable } from 'kysely';
import { projectVisibleTo } from '../../access/access.repository.js';
import type { Executor } from '../../db/database.js';
import type { ProjectsTable } from '../../db/schema.js';
import type { ProjectRow } from './projects.schemas.js';

export type CounterColumn = 'image_count' | 'annotated_image_count' | 'annotation_count' | 'class_count' | 'sample_count' | 'labelled_sample_count';

export class ProjectsRepository {
  constructor(private readonly db: Executor) {}

  /** A project that exists and is complete; one still being imported is not found. */
  find(id: number, db: Executor = this.db): Promise<ProjectRow | undefined> {
    return db.selectFrom('projects').selectAll().where('id', '=', id).where('status', '=', 'ready').executeTakeFirst();
  }

  /** Projects visible to `viewerId` (owned, member of, or administered through an organization), or all when null; newest first. */
  list(viewerId: number | null, search?: string): Promise<ProjectRow[]> {
    let query = this.db.selectFrom('projects').selectAll().where('status', '=', 'ready').orderBy('id', 'desc');
    if (viewerId !== null) query = query.where(projectVisibleTo(viewerId));
    // `%` and `_` in the search are the characters themselves, not wildcards (escaped, on both databases).
    if (search) query = query.where(sql<SqlBool>`lower(name) like ${`%${search.toLowerCase().replace(/[%_\\]/g, (c) => `\\${c}`)}%`} escape '\\'`);
    return query.execute();
  }

  insert(values: Insertable<ProjectsTable>): Promise<ProjectRow> {
    return this.db.insertInto('projects').values(values).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, values: Updateable<ProjectsTable>): Promise<ProjectRow> {
    return this.db.updateTable('projects').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /** How many of the project's images hold more than one classification (what single-label cannot keep). */
  async imagesWithClasses(projectId: number): Promise<number> {
    const row = await this.db
      .selectFrom((eb) =>
        eb.selectFrom('annotations').select('image_id').where('project_id', '=', projectId).where('annotation_type', '=', 'classification')
          .groupBy('image_id').having((h) => h.fn.countAll(), '>', 1).as('several'))
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async delete(id: number, db: Executor = this.db): Promise<void> {
    await db.deleteFrom('projects').where('id', '=', id).execute();
  }

  /** Adds deltas to a project's counters (kept so that counts and stats never count rows). */
  async bumpCounters(projectId: number, deltas: Partial<Record<CounterColumn, number>>, db: Executor = this.db): Promise<void> {
    const entries = (Object.entries(deltas) as [CounterColumn, number][]).filter(([, delta]) => delta !== 0);
    if (entries.length === 0) return;
    await db
      .updateTable('projects')
      .set((eb) => Object.fromEntries(entries.map(([column, delta]) => [column, eb(column, '+', delta)])))
      .where('id', '=', projectId)
      .execute();
  }

  /** Sums of the counters over the projects visible to `viewerId` (or all projects when null). */
  async totals(viewerId: number | null) {
    let query = this.db
      .selectFrom('projects')
      .select((eb) => [
        eb.fn.countAll<number>().as('project_count'),
        eb.fn.coalesce(eb.fn.sum<number>('image_count'), eb.lit(0)).as('total_images'),
        eb.fn.coalesce(eb.fn.sum<number>('annotated_image_count'), eb.lit(0)).as('annotated_images'),
        eb.fn.coalesce(eb.fn.sum<number>('annotation_count'), eb.lit(0)).as('total_annotations'),
        eb.fn.coalesce(eb.fn.sum<number>('sample_count'), eb.lit(0)).as('total_samples'),
        eb.fn.coalesce(eb.fn.sum<number>('labelled_sample_count'), eb.lit(0)).as('labelled_samples'),
      ])
      .where('status', '=', 'ready');
    if (viewerId !== null) query = query.where(projectVisibleTo(viewerId));
    const row = await query.executeTakeFirstOrThrow();
    return {
      project_count: Number(row.project_count),
      total_images: Number(row.total_images),
      annotated_images: Number(row.annotated_images),
      total_annotations: Number(row.total_annotations),
      total_samples: Number(row.total_samples),
      labelled_samples: Number(row.labelled_samples),
    };
  }
}
