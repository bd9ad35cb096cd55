import { sql } from 'kysely';
import { arrayRows } from '../../db/array-rows.js';
import type { Db } from '../../db/database.js';
import type { Skeleton } from '../../imaging/class-specs.js';
import { ANNOTATION_TYPES } from '../../imaging/geometry.js';
import { TYPE_OTHER, type AnnotationChunkRow } from './dataset-snapshot.logic.js';

/** The annotation type as its index in ANNOTATION_TYPES (a number costs less to read than a string per row). */
const TYPE_INDEX = sql.raw(`case annotation_type ${ANNOTATION_TYPES.map((t, i) => `when '${t}' then ${i}`).join(' ')} else ${TYPE_OTHER} end`);

/** Reads of the quality report that are not profile aggregates or feature-cache rows. */
export class QualityRepository {
  constructor(private readonly db: Db) {}

  /**
   * A chunk of the project's annotations in id order, after `afterId` (keyset on the (project_id, id) index), as
   * arrays (AnnotationChunkRow): boxes as the stored numbers, the type as its index, only the geometry of polygons, rotated boxes and the shapes with no stored box as text.
   */
  annotationChunk(projectId: number, afterId: number, limit: number): Promise<AnnotationChunkRow[]> {
    const query = this.db
      .selectFrom('annotations')
      .select(['id', 'image_id', 'class_id', sql<number>`${TYPE_INDEX}`.as('type'), 'box_x', 'box_y', 'box_w', 'box_h'])
      // Polygons, the shapes with no stored box, and rotated boxes (their stored columns are the box before rotation).
      .select(sql<string | null>`case when annotation_type in ('polygon', 'keypoints', 'polyline', 'points', 'ellipse') or (annotation_type = 'bbox' and geometry like '%"rotation"%') then geometry end`.as('polygon'))
      .where('project_id', '=', projectId)
      .where('status', '=', 'accepted')
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit);
    return arrayRows<AnnotationChunkRow>(this.db, query);
  }

  /** The project's class names, and the point names of each class with a keypoint skeleton. */
  async classes(projectId: number): Promise<{ names: Map<number, string>; skeletons: Map<number, string[]> }> {
    const rows = await this.db.selectFrom('classes').select(['id', 'name', 'skeleton']).where('project_id', '=', projectId).orderBy('id').execute();
    const skeletons = new Map<number, string[]>();
    for (const r of rows) if (r.skeleton !== null) skeletons.set(r.id, (JSON.parse(r.skeleton) as Skeleton).points);
    return { names: new Map(rows.map((r) => [r.id, r.name])), skeletons };
  }
}
