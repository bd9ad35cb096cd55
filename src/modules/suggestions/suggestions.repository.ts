import type { Db } from '../../db/database.js';
import type { ImageToAnnotate } from '../auto-annotate/auto-annotate.repository.js';

export class SuggestionsRepository {
  constructor(private readonly db: Db) {}

  /** Ids of the listed images that are in the project (and assigned to `assignedTo` when given). */
  async inProject(projectId: number, imageIds: number[], assignedTo: number | null): Promise<Set<number>> {
    let query = this.db.selectFrom('images').select('images.id').where('images.project_id', '=', projectId).where('images.id', 'in', imageIds);
    if (assignedTo !== null) {
      query = query.where((eb) =>
        eb.exists(eb.selectFrom('assignments').select('assignments.id').whereRef('assignments.image_id', '=', 'images.id').where('assignments.user_id', '=', assignedTo)),
      );
    }
    return new Set((await query.execute()).map((r) => r.id));
  }

  /**
   * The listed images of the project a model should still predict, in id order: those with no accepted annotation
   * (someone labelled them already) and no open suggestion from `source` (it predicted them already).
   */
  toPredict(projectId: number, imageIds: number[], source: string): Promise<ImageToAnnotate[]> {
    if (imageIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('images')
      .select(['images.id', 'images.project_id', 'images.blob_key', 'images.sha256', 'images.width', 'images.height', 'images.annotation_count'])
      .where('images.project_id', '=', projectId)
      .where('images.id', 'in', imageIds)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('annotations')
              .select('annotations.id')
              .whereRef('annotations.image_id', '=', 'images.id')
              .where((a) => a.or([a('annotations.status', '=', 'accepted'), a('annotations.source', '=', source)])),
          ),
        ),
      )
      .orderBy('images.id')
      .execute();
  }

  /** The project's job of this name that is queued or running, if any. */
  async activeJob(projectId: number, name: string): Promise<number | null> {
    const row = await this.db
      .selectFrom('jobs')
      .select('id')
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('id')
      .executeTakeFirst();
    return row?.id ?? null;
  }
}
