import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { PART_BITS } from '../../db/migrations/0019-project-revision-parts.js';
import { clampTo, floorInt } from '../../db/sql-json.js';
import { tallies } from '../../db/tallies.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';
import { ShapeTallies, type AttributeTally, type KeypointTally } from './shape-tallies.repository.js';

/** Cells per side of the box-centre heat map. */
export const HEATMAP_CELLS = 10;

export interface BoxCellRow {
  size: 'small' | 'medium' | 'large';
  cx: number;
  cy: number;
  n: number;
}

/** The profile of one part of a project's images (PART_BITS): every section a sum over the part's rows. */
export interface ImagesPart {
  /** Images by split and by how many annotations they carry. */
  images: { split: string | null; annotations: number; images: number }[];
  /** Instances and distinct images of each class in each split. */
  classSplits: { class_id: number; split: string | null; instances: number; images: number }[];
  types: Record<string, number>;
  boxes: BoxCellRow[];
  sizes: { width: number; height: number; images: number }[];
  /** Attribute values per class. */
  attributes: AttributeTally[];
  /** Keypoint visibility per class and skeleton point. */
  keypoints: KeypointTally[];
}

const SPLITS = [...SPLIT_NAMES, null] as const;
const BOX_SIZES = ['small', 'medium', 'large'] as const;
/** The cell code of an annotation that is not a bounding box (a box's is size · cells² + column · cells + row < 999). */
const NO_CELL = 999;

export const emptyImagesPart = (): ImagesPart => ({ images: [], classSplits: [], types: {}, boxes: [], sizes: [], attributes: [], keypoints: [] });

/**
 * The dataset profile's SQL aggregates, per part of the project's images: every number comes from an aggregate over
 * the rows of a range of parts (a GROUP BY over the images; the annotations' two questions as tallies, in one pass on
 * SQLite), the part in the grouping, none from reading rows one by one into the process. The queries walk the project's images by id (their index) and each image's annotations (theirs),
 * so a range of one part reads about a thousand images, whatever the project's size.
 */
export class ProfileRepository {
  private readonly shapes: ShapeTallies;

  constructor(private readonly db: Db) {
    this.shapes = new ShapeTallies(db);
  }

  /** The project's classes; `skeleton` and `attributes` as the JSON text the row stores (null when none). */
  classes(projectId: number): Promise<{ id: number; name: string; color: string; skeleton: string | null; attributes: string | null }[]> {
    return this.db.selectFrom('classes').select(['id', 'name', 'color', 'skeleton', 'attributes']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  /** The parts `first`…`last` of the project's images, each part that holds images once. */
  async imageParts(projectId: number, first: number, last: number): Promise<Map<number, ImagesPart>> {
    const db = this.db;
    const part = sql<number>`(images.id >> ${sql.lit(PART_BITS)})`;
    const images = () =>
      db
        .selectFrom('images')
        .where('images.project_id', '=', projectId)
        .where('images.id', '>=', first << PART_BITS)
        .where('images.id', '<', (last + 1) << PART_BITS);
    const cell = (offset: string, extent: string, side: string) =>
      clampTo(db, floorInt(db, sql<number>`(${sql.ref(offset)} + ${sql.ref(extent)} / 2.0) * ${sql.lit(HEATMAP_CELLS)} / ${sql.ref(side)}`), 0, HEATMAP_CELLS - 1);
    const area = sql`annotations.box_w * annotations.box_h`;
    const size = sql<number>`case when ${area} < 1024 then 0 when ${area} < 9216 then 1 else 2 end`;
    const [imageRows, sizeRows, [classRows, cellRows]] = await Promise.all([
      images()
        .select([part.as('part'), 'split', 'annotation_count', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy([sql`1`, 'split', 'annotation_count'])
        .execute(),
      images()
        .select([part.as('part'), 'width', 'height', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy([sql`1`, 'width', 'height'])
        .execute(),
      // Both annotation questions in one pass, keys packed as integers (see decoding below). Suggestions are not
      // annotations until accepted.
      tallies(db, images().innerJoin('annotations', (join) => join.onRef('annotations.image_id', '=', 'images.id').on('annotations.status', '=', 'accepted')), [
        // Instances and distinct images per class, part and split.
        {
          a: sql.ref('annotations.class_id'),
          b: sql`${part} * 4 + case images.split when 'train' then 0 when 'valid' then 1 when 'test' then 2 else 3 end`,
          member: sql.ref('images.id'),
        },
        // Annotations per type, and bounding boxes per size and heat-map cell, per part.
        {
          a: sql.ref('annotations.annotation_type'),
          b: sql`${part} * 1000 + case when annotations.annotation_type = 'bbox' then ${size} * ${sql.lit(HEATMAP_CELLS ** 2)} + ${cell('annotations.box_x', 'annotations.box_w', 'images.width')} * ${sql.lit(HEATMAP_CELLS)} + ${cell('annotations.box_y', 'annotations.box_h', 'images.height')} else ${sql.lit(NO_CELL)} end`,
        },
      ]),
    ]);
    const parts = new Map<number, ImagesPart>();
    const of = (p: number) => parts.get(p) ?? parts.set(p, emptyImagesPart()).get(p)!;
    for (const r of imageRows) of(r.part).images.push({ split: r.split, annotations: Number(r.annotation_count), images: Number(r.n) });
    for (const r of sizeRows) of(r.part).sizes.push({ width: r.width, height: r.height, images: Number(r.n) });
    for (const r of classRows) {
      const b = Number(r.b);
      of(Math.floor(b / 4)).classSplits.push({ class_id: Number(r.a), split: SPLITS[b % 4], instances: r.rows, images: r.members });
    }
    for (const r of cellRows) {
      const b = Number(r.b);
      const p = of(Math.floor(b / 1000));
      const code = b % 1000;
      const type = String(r.a);
      p.types[type] = (p.types[type] ?? 0) + r.rows;
      if (code !== NO_CELL) p.boxes.push({ size: BOX_SIZES[Math.floor(code / HEATMAP_CELLS ** 2)], cx: Math.floor(code / HEATMAP_CELLS) % HEATMAP_CELLS, cy: code % HEATMAP_CELLS, n: r.rows });
    }
    // Attribute values and keypoint visibility: only read when a class declares attributes, or a part holds keypoints.
    const [attributes, keypoints] = await Promise.all([
      (await this.shapes.hasAttributes(projectId)) ? this.shapes.attributes(projectId, first, last) : new Map<number, AttributeTally[]>(),
      [...parts.values()].some((p) => p.types.keypoints > 0) ? this.shapes.keypoints(projectId, first, last) : new Map<number, KeypointTally[]>(),
    ]);
    for (const [p, part] of parts) {
      part.attributes = attributes.get(p) ?? [];
      part.keypoints = keypoints.get(p) ?? [];
    }
    return parts;
  }
}
