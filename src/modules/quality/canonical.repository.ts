import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { jsonQuote, stringAgg } from '../../db/sql-json.js';

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

/** An image with its annotations already written as JSON text by the database. */
export interface CanonicalImageRecordRow extends CanonicalImageRow {
  /** The annotations as JSON objects joined by commas, in id order (null: none). */
  annotations: string | null;
}

/** Keyset pages of image records for the canonical stream: bounded reads, never a whole project at once. */
export class CanonicalRepository {
  constructor(private readonly db: Db) {}

  /**
   * A keyset page of images, each with its annotations as JSON text built by the database: the stored geometry goes
   * in unparsed, strings are quoted by the database, so a million annotations never become a million row objects.
   */
  imageRecords(projectId: number, after: number, limit: number, split?: string): Promise<CanonicalImageRecordRow[]> {
    const db = this.db;
    const q = (ref: string) => jsonQuote(db, sql.ref(ref));
    const annotation = sql<string>`'{"id":' || a.id || ',"label":' || coalesce(${q('c.name')}, '""') || ',"class_id":' || a.class_id || ',"type":' || ${q('a.annotation_type')} || ',"geometry":' || a.geometry || ',"confidence":' || coalesce(cast(a.confidence as text), 'null') || ',"source":' || ${q('a.source')} || ',"status":' || ${q('a.status')} || '}'`;
    let query = db
      .selectFrom('images')
      .select(['id', 'filename', 'original_name', 'width', 'height', 'split', 'sha256', 'mime_type', 'size_bytes', 'review_state', 'created_at'])
      .select(
        sql<string | null>`(select ${stringAgg(db, annotation, ',', sql.ref('a.id'))} from annotations a left join classes c on c.id = a.class_id where a.image_id = images.id)`.as('annotations'),
      )
      .where('project_id', '=', projectId)
      .where('id', '>', after);
    if (split) query = query.where('split', '=', split);
    return query.orderBy('id').limit(limit).execute();
  }
}
