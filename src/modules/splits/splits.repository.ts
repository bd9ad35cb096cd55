import type { Db } from '../../db/database.js';
import { SPLIT_NAMES, type SplitName } from '../../lib/vocabulary.js';

/** Rows written per transaction when splits are reassigned: bounded transactions, never one long one. */
export const SPLIT_WRITE_BATCH = 1000;

export interface SplitImage {
  id: number;
  sha256: string;
  blob_key: string;
  dhash: string | null;
}

export class SplitsRepository {
  constructor(private readonly db: Db) {}

  /** The project's image ids, in id order. */
  async imageIds(projectId: number): Promise<number[]> {
    const rows = await this.db.selectFrom('images').select('id').where('project_id', '=', projectId).orderBy('id').execute();
    return rows.map((r) => r.id);
  }

  /** The video of each image that is a frame (a video's frames go to one split). */
  async videoOf(projectId: number): Promise<Map<number, number>> {
    const rows = await this.db.selectFrom('images').select(['id', 'video_id']).where('project_id', '=', projectId).where('video_id', 'is not', null).execute();
    return new Map(rows.map((r) => [r.id, r.video_id!]));
  }

  /** Every image's class names (distinct), for stratification. */
  async imageClassNames(projectId: number): Promise<Map<number, string[]>> {
    const rows = await this.db
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .select(['annotations.image_id', 'classes.name'])
      .distinct()
      .where('annotations.project_id', '=', projectId)
      .where('annotations.status', '=', 'accepted')
      .execute();
    const out = new Map<number, string[]>();
    for (const row of rows) {
      const list = out.get(row.image_id) ?? [];
      list.push(row.name);
      out.set(row.image_id, list);
    }
    return out;
  }

  /** Images with their cached dHash, when the cache entry is for the image's current content. */
  imagesWithHashes(projectId: number): Promise<SplitImage[]> {
    return this.db
      .selectFrom('images')
      .leftJoin('image_phashes', (join) =>
        join.onRef('image_phashes.image_id', '=', 'images.id').onRef('image_phashes.sha256', '=', 'images.sha256'),
      )
      .select(['images.id', 'images.sha256', 'images.blob_key', 'image_phashes.dhash'])
      .where('images.project_id', '=', projectId)
      .orderBy('images.id')
      .execute();
  }

  async cacheHashes(rows: { image_id: number; sha256: string; dhash: string }[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) {
      await this.db
        .insertInto('image_phashes')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.column('image_id').doUpdateSet((eb) => ({ sha256: eb.ref('excluded.sha256'), dhash: eb.ref('excluded.dhash'), fine: eb.ref('excluded.fine') })))
        .execute();
    }
  }

  /** Writes the assignment, SPLIT_WRITE_BATCH images per transaction (one UPDATE per split within each). */
  async assign(projectId: number, assignment: Map<number, SplitName>): Promise<void> {
    const entries = [...assignment];
    for (let i = 0; i < entries.length; i += SPLIT_WRITE_BATCH) {
      const batch = entries.slice(i, i + SPLIT_WRITE_BATCH);
      await this.db.transaction().execute(async (tx) => {
        for (const split of SPLIT_NAMES) {
          const ids = batch.filter(([, s]) => s === split).map(([id]) => id);
          if (ids.length === 0) continue;
          await tx.updateTable('images').set({ split }).where('project_id', '=', projectId).where('id', 'in', ids).execute();
        }
      });
    }
  }

  /** Image counts per split; `unassigned` counts images with no split. */
  async counts(projectId: number): Promise<{ train: number; valid: number; test: number; unassigned: number }> {
    const rows = await this.db
      .selectFrom('images')
      .select(['split', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy('split')
      .execute();
    const out = { train: 0, valid: 0, test: 0, unassigned: 0 };
    for (const row of rows) {
      const key = row.split && (SPLIT_NAMES as readonly string[]).includes(row.split) ? (row.split as SplitName) : 'unassigned';
      out[key] += Number(row.n);
    }
    return out;
  }
}
