import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { floorInt } from '../../db/sql-json.js';

/** Cells per side of the box-centre heat map. */
export const HEATMAP_CELLS = 10;

export interface SplitRow {
  split: string | null;
  images: number;
  annotated: number;
}

export interface ClassSplitRow {
  class_id: number;
  split: string | null;
  instances: number;
  images: number;
}

export interface BoxCellRow {
  size: 'small' | 'medium' | 'large';
  cx: number;
  cy: number;
  n: number;
}

/**
 * The dataset profile's SQL aggregates: every number comes from a GROUP BY over the project's rows, none from
 * reading rows one by one into the process (the profile of a million annotations is one pass per question).
 */
export class ProfileRepository {
  constructor(private readonly db: Db) {}

  async splits(projectId: number): Promise<SplitRow[]> {
    const rows = await this.db
      .selectFrom('images')
      .select([
        'split',
        (eb) => eb.fn.countAll<number>().as('images'),
        sql<number>`sum(case when annotation_count > 0 then 1 else 0 end)`.as('annotated'),
      ])
      .where('project_id', '=', projectId)
      .groupBy('split')
      .execute();
    return rows.map((r) => ({ split: r.split, images: Number(r.images), annotated: Number(r.annotated ?? 0) }));
  }

  /** Instances and distinct images of each class in each split. */
  async classSplits(projectId: number): Promise<ClassSplitRow[]> {
    const rows = await this.db
      .selectFrom('annotations')
      .innerJoin('images', 'images.id', 'annotations.image_id')
      .select([
        'annotations.class_id',
        'images.split',
        (eb) => eb.fn.countAll<number>().as('instances'),
        (eb) => eb.fn.count<number>('annotations.image_id').distinct().as('images'),
      ])
      .where('annotations.project_id', '=', projectId)
      .groupBy(['annotations.class_id', 'images.split'])
      .execute();
    return rows.map((r) => ({ class_id: r.class_id, split: r.split, instances: Number(r.instances), images: Number(r.images) }));
  }

  classes(projectId: number): Promise<{ id: number; name: string; color: string }[]> {
    return this.db.selectFrom('classes').select(['id', 'name', 'color']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  async annotationTypes(projectId: number): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('annotations')
      .select(['annotation_type', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy('annotation_type')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.annotation_type, Number(r.n)]));
  }

  /** How many images carry each number of annotations. */
  async annotationsPerImage(projectId: number): Promise<{ annotations: number; images: number }[]> {
    const rows = await this.db
      .selectFrom('images')
      .select(['annotation_count', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy('annotation_count')
      .orderBy('annotation_count')
      .execute();
    return rows.map((r) => ({ annotations: Number(r.annotation_count), images: Number(r.n) }));
  }

  async imageSizes(projectId: number): Promise<{ width: number; height: number; images: number }[]> {
    const rows = await this.db
      .selectFrom('images')
      .select(['width', 'height', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy(['width', 'height'])
      .orderBy(sql`count(*)`, 'desc')
      .execute();
    return rows.map((r) => ({ width: r.width, height: r.height, images: Number(r.n) }));
  }

  /**
   * The annotations by type, and bounding boxes by COCO size (area < 32², < 96², larger) and by the heat-map cell
   * their centre falls in, in one pass: at most the types plus 3 × HEATMAP_CELLS² groups come back.
   */
  async annotationCells(projectId: number): Promise<{ types: Record<string, number>; boxes: BoxCellRow[] }> {
    const db = this.db;
    const annotations = db
      .selectFrom('annotations')
      .innerJoin('images', 'images.id', 'annotations.image_id')
      .select(['annotations.annotation_type as type', 'annotations.box_x as x', 'annotations.box_y as y', 'annotations.box_w as w', 'annotations.box_h as h', 'images.width as iw', 'images.height as ih'])
      .where('annotations.project_id', '=', projectId)
      .as('b');
    const clamp = (v: RawBuilder<number>) => sql<number>`case when ${v} < 0 then 0 when ${v} > ${HEATMAP_CELLS - 1} then ${HEATMAP_CELLS - 1} else ${v} end`;
    const cell = (offset: string, extent: string, side: string) =>
      sql<number | null>`case when type = 'bbox' then ${clamp(floorInt(db, sql<number>`(${sql.ref(offset)} + ${sql.ref(extent)} / 2.0) * ${HEATMAP_CELLS} / ${sql.ref(side)}`))} end`;
    const cells = db
      .selectFrom(annotations)
      .select([
        'type',
        sql<string | null>`case when type <> 'bbox' then null when w * h < 1024 then 'small' when w * h < 9216 then 'medium' else 'large' end`.as('size'),
        cell('x', 'w', 'iw').as('cx'),
        cell('y', 'h', 'ih').as('cy'),
      ])
      .as('c');
    const rows = await db
      .selectFrom(cells)
      .select(['type', 'size', 'cx', 'cy', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['type', 'size', 'cx', 'cy'])
      .execute();
    const types: Record<string, number> = {};
    const boxes: BoxCellRow[] = [];
    for (const r of rows) {
      types[r.type] = (types[r.type] ?? 0) + Number(r.n);
      if (r.size !== null && r.cx !== null && r.cy !== null) boxes.push({ size: r.size as BoxCellRow['size'], cx: Number(r.cx), cy: Number(r.cy), n: Number(r.n) });
    }
    return { types, boxes };
  }
}
