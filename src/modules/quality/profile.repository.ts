import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { PART_BITS } from '../../db/migrations/0019-project-revision-parts.js';
import { clampTo, floorInt } from '../../db/sql-json.js';

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
}

export const emptyImagesPart = (): ImagesPart => ({ images: [], classSplits: [], types: {}, boxes: [], sizes: [] });

/**
 * The dataset profile's SQL aggregates, per part of the project's images: every number comes from a GROUP BY over
 * the rows of a range of parts (one pass per question, the part in the grouping), none from reading rows one by one
 * into the process. The queries walk the project's images by id (their index) and each image's annotations (theirs),
 * so a range of one part reads about a thousand images, whatever the project's size.
 */
export class ProfileRepository {
  constructor(private readonly db: Db) {}

  classes(projectId: number): Promise<{ id: number; name: string; color: string }[]> {
    return this.db.selectFrom('classes').select(['id', 'name', 'color']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  /** The parts `first`…`last` of the project's images, each part that holds images once. */
  async imageParts(projectId: number, first: number, last: number): Promise<Map<number, ImagesPart>> {
    const db = this.db;
    const part = sql<number>`images.id >> ${sql.lit(PART_BITS)}`;
    const images = () =>
      db
        .selectFrom('images')
        .where('images.project_id', '=', projectId)
        .where('images.id', '>=', first << PART_BITS)
        .where('images.id', '<', (last + 1) << PART_BITS);
    const cell = (offset: string, extent: string, side: string) =>
      sql<number | null>`case when annotations.annotation_type = 'bbox' then ${clampTo(db, floorInt(db, sql<number>`(${sql.ref(offset)} + ${sql.ref(extent)} / 2.0) * ${sql.lit(HEATMAP_CELLS)} / ${sql.ref(side)}`), 0, HEATMAP_CELLS - 1)} end`;
    const area = sql`annotations.box_w * annotations.box_h`;
    const [imageRows, classRows, cellRows, sizeRows] = await Promise.all([
      images()
        .select([part.as('part'), 'split', 'annotation_count', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy([sql`1`, 'split', 'annotation_count'])
        .execute(),
      images()
        .innerJoin('annotations', 'annotations.image_id', 'images.id')
        .select([
          part.as('part'),
          'annotations.class_id',
          'images.split',
          (eb) => eb.fn.countAll<number>().as('instances'),
          (eb) => eb.fn.count<number>('annotations.image_id').distinct().as('images'),
        ])
        .groupBy([sql`1`, 'annotations.class_id', 'images.split'])
        .execute(),
      images()
        .innerJoin('annotations', 'annotations.image_id', 'images.id')
        .select([
          part.as('part'),
          'annotations.annotation_type as type',
          sql<string | null>`case when annotations.annotation_type <> 'bbox' then null when ${area} < 1024 then 'small' when ${area} < 9216 then 'medium' else 'large' end`.as('size'),
          cell('annotations.box_x', 'annotations.box_w', 'images.width').as('cx'),
          cell('annotations.box_y', 'annotations.box_h', 'images.height').as('cy'),
          (eb) => eb.fn.countAll<number>().as('n'),
        ])
        .groupBy([sql`1`, sql`2`, sql`3`, sql`4`, sql`5`])
        .execute(),
      images()
        .select([part.as('part'), 'width', 'height', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy([sql`1`, 'width', 'height'])
        .execute(),
    ]);
    const parts = new Map<number, ImagesPart>();
    const of = (p: number) => parts.get(p) ?? parts.set(p, emptyImagesPart()).get(p)!;
    for (const r of imageRows) of(r.part).images.push({ split: r.split, annotations: Number(r.annotation_count), images: Number(r.n) });
    for (const r of classRows) of(r.part).classSplits.push({ class_id: r.class_id, split: r.split, instances: Number(r.instances), images: Number(r.images) });
    for (const r of cellRows) {
      const p = of(r.part);
      p.types[r.type] = (p.types[r.type] ?? 0) + Number(r.n);
      if (r.size !== null && r.cx !== null && r.cy !== null) p.boxes.push({ size: r.size as BoxCellRow['size'], cx: Number(r.cx), cy: Number(r.cy), n: Number(r.n) });
    }
    for (const r of sizeRows) of(r.part).sizes.push({ width: r.width, height: r.height, images: Number(r.n) });
    return parts;
  }
}
