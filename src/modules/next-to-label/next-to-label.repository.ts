import type { Db } from '../../db/database.js';
import { IMAGE_OUT_COLUMNS, type ImageOutRow } from '../images/images.schemas.js';

/** What ranking needs of an image: its id, the bytes' hash (the prediction cache key) and where the bytes are. */
export interface PoolImage {
  id: number;
  sha256: string;
  blob_key: string;
}

export class NextToLabelRepository {
  constructor(private readonly db: Db) {}

  /**
   * The project's images with (`labelled`) or without an accepted annotation, in id order; with `assignedTo`, only
   * that user's assignments (the same scope as the image list).
   */
  images(projectId: number, labelled: boolean, assignedTo: number | null): Promise<PoolImage[]> {
    let query = this.db
      .selectFrom('images')
      .select(['images.id', 'images.sha256', 'images.blob_key'])
      .where('images.project_id', '=', projectId)
      .where('images.annotation_count', labelled ? '>' : '=', 0);
    if (assignedTo !== null) {
      query = query.where((eb) =>
        eb.exists(eb.selectFrom('assignments').select('assignments.id').whereRef('assignments.image_id', '=', 'images.id').where('assignments.user_id', '=', assignedTo)),
      );
    }
    return query.orderBy('images.id').execute();
  }

  async imageRows(ids: number[]): Promise<Map<number, ImageOutRow>> {
    const rows = ids.length ? await this.db.selectFrom('images').select(IMAGE_OUT_COLUMNS).where('id', 'in', ids).execute() : [];
    return new Map(rows.map((r) => [r.id, r]));
  }
}
