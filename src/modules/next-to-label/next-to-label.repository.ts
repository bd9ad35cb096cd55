import type { ExpressionBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
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
   * that user's assignments (the same scope as the image list). With `hideGroundTruth`, ground-truth images count as
   * unlabelled (a caller they are hidden from, issue 29).
   */
  images(projectId: number, labelled: boolean, assignedTo: number | null, hideGroundTruth = false): Promise<PoolImage[]> {
    let query = this.db
      .selectFrom('images')
      .select(['images.id', 'images.sha256', 'images.blob_key'])
      .where('images.project_id', '=', projectId);
    if (!hideGroundTruth) query = query.where('images.annotation_count', labelled ? '>' : '=', 0);
    else {
      const groundTruth = (eb: ExpressionBuilder<Database, 'images'>) => eb('images.id', 'in', eb.selectFrom('qc_ground_truth').select('qc_ground_truth.image_id').where('qc_ground_truth.project_id', '=', projectId));
      query = labelled
        ? query.where('images.annotation_count', '>', 0).where((eb) => eb.not(groundTruth(eb)))
        : query.where((eb) => eb.or([eb('images.annotation_count', '=', 0), groundTruth(eb)]));
    }
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
