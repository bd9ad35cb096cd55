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
    return this.scoped(projectId, labelled, assignedTo, hideGroundTruth).select(['images.sha256', 'images.blob_key']).orderBy('images.id').execute();
  }

  /** Accepted boxes and shapes per class name on the labelled images of the same scope. */
  async classCounts(projectId: number, assignedTo: number | null, hideGroundTruth = false): Promise<Map<string, number>> {
    const labelled = this.scoped(projectId, true, assignedTo, hideGroundTruth);
    const rows = await this.db
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .select(['classes.name', (eb) => eb.fn.countAll<number | string | bigint>().as('n')])
      .where('annotations.project_id', '=', projectId)
      .where('annotations.status', '=', 'accepted')
      .where('annotations.image_id', 'in', labelled)
      .groupBy('classes.name')
      .execute();
    return new Map(rows.map((r) => [r.name, Number(r.n)]));
  }

  private scoped(projectId: number, labelled: boolean, assignedTo: number | null, hideGroundTruth: boolean) {
    let query = this.db.selectFrom('images').select('images.id').where('images.project_id', '=', projectId);
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
    return query;
  }

  async imageRows(ids: number[]): Promise<Map<number, ImageOutRow>> {
    const rows = ids.length ? await this.db.selectFrom('images').select(IMAGE_OUT_COLUMNS).where('id', 'in', ids).execute() : [];
    return new Map(rows.map((r) => [r.id, r]));
  }
}
