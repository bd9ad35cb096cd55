import type { Db } from '../../db/database.js';
import type { AnnotationChunkRow } from './dataset-snapshot.js';

/** Reads of the quality report that are not profile aggregates or feature-cache rows. */
export class QualityRepository {
  constructor(private readonly db: Db) {}

  /** A chunk of the project's annotations in id order, after `afterId` (keyset on the (project_id, id) index). */
  annotationChunk(projectId: number, afterId: number, limit: number): Promise<AnnotationChunkRow[]> {
    return this.db
      .selectFrom('annotations')
      .select(['id', 'image_id', 'class_id', 'annotation_type', 'geometry'])
      .where('project_id', '=', projectId)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async classNames(projectId: number): Promise<Map<number, string>> {
    const rows = await this.db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).orderBy('id').execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}
