import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ExperimentsTable } from '../../db/schema.js';

export type ExperimentRow = Selectable<ExperimentsTable>;

/** Experiments as their readers see them (the training module writes the runs), and what their error views join. */
export class ExperimentsRepository {
  constructor(private readonly db: Db) {}

  find(id: number): Promise<ExperimentRow | undefined> {
    return this.db.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async update(id: number, values: Updateable<ExperimentsTable>): Promise<void> {
    await this.db.updateTable('experiments').set(values).where('id', '=', id).execute();
  }

  list(projectId: number, filter: { status?: string; adapter?: string; versionId?: number; tag?: string; limit: number; offset: number }): Promise<ExperimentRow[]> {
    let query = this.db.selectFrom('experiments').selectAll().where('project_id', '=', projectId);
    if (filter.status) query = query.where('status', '=', filter.status as ExperimentRow['status']);
    if (filter.adapter) query = query.where('adapter', '=', filter.adapter);
    if (filter.versionId) query = query.where('version_id', '=', filter.versionId);
    if (filter.tag) query = query.where('tags', 'like', `%${JSON.stringify(filter.tag).replace(/[%_]/g, '')}%`);
    return query.orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute();
  }

  /**
   * A version's images with the project image each was made from (its size, to map boxes back; null when that image
   * is gone) and the steps that made it.
   */
  versionImageSources(versionId: number, projectId: number): Promise<{ id: number; split: string; filename: string; lineage: string; image_id: number | null; source_width: number | null; source_height: number | null }[]> {
    return this.db
      .selectFrom('version_images')
      .leftJoin('images', (join) => join.onRef('images.id', '=', 'version_images.source_image_id').on('images.project_id', '=', projectId))
      .select(['version_images.id', 'version_images.split', 'version_images.filename', 'version_images.lineage', 'images.id as image_id', 'images.width as source_width', 'images.height as source_height'])
      .where('version_images.version_id', '=', versionId)
      .execute();
  }

  async projectClassIds(projectId: number): Promise<Map<string, number>> {
    const rows = await this.db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).execute();
    return new Map(rows.map((r) => [r.name, r.id]));
  }

  async assignedImageIds(projectId: number, userId: number): Promise<Set<number>> {
    const rows = await this.db.selectFrom('assignments').select('image_id').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
    return new Set(rows.map((r) => r.image_id));
  }
}
