import type { Db } from '../../db/database.js';

export interface CanonicalImageRow {
  id: number;
  filename: string;
  original_name: string;
  width: number;
  height: number;
  split: string | null;
  sha256: string;
  mime_type: string;
  size_bytes: number;
  review_state: string;
  created_at: string;
}

export interface CanonicalAnnotationRow {
  id: number;
  image_id: number;
  class_id: number;
  annotation_type: string;
  geometry: string;
  confidence: number | null;
  source: string;
}

/** Keyset pages of images and annotations for the canonical stream: bounded reads, never a whole project at once. */
export class CanonicalRepository {
  constructor(private readonly db: Db) {}

  images(projectId: number, after: number, limit: number, split?: string): Promise<CanonicalImageRow[]> {
    let query = this.db
      .selectFrom('images')
      .select(['id', 'filename', 'original_name', 'width', 'height', 'split', 'sha256', 'mime_type', 'size_bytes', 'review_state', 'created_at'])
      .where('project_id', '=', projectId)
      .where('id', '>', after);
    if (split) query = query.where('split', '=', split);
    return query.orderBy('id').limit(limit).execute();
  }

  /**
   * Annotations of the project's images `firstImageId`..`lastImageId` after `from` in (image id, id) order, read
   * along the (image_id, id) index (see ExportsRepository.projectAnnotations for why the images are a subquery).
   */
  annotations(projectId: number, from: { imageId: number; id: number }, lastImageId: number, limit: number): Promise<CanonicalAnnotationRow[]> {
    return this.db
      .selectFrom('annotations')
      .select(['id', 'image_id', 'class_id', 'annotation_type', 'geometry', 'confidence', 'source'])
      .where('image_id', 'in', (eb) =>
        eb.selectFrom('images').select('images.id').where('images.project_id', '=', projectId).where('images.id', '>=', from.imageId).where('images.id', '<=', lastImageId),
      )
      .where((eb) => eb(eb.refTuple('image_id', 'id'), '>', eb.tuple(from.imageId, from.id)))
      .orderBy('image_id')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async classNames(projectId: number): Promise<Map<number, string>> {
    const rows = await this.db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }
}
