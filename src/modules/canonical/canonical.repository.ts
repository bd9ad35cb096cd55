import { sql } from 'kysely';
import { arrayRows } from '../../db/array-rows.js';
import type { Db } from '../../db/database.js';
import type { SampleModality } from '../../db/schema.js';
import { isPostgres, jsonQuote, stringAgg } from '../../db/sql-json.js';

/**
 * An image's canonical record as the database writes it, in pieces around what it cannot spell: the file's URL-encoded
 * name (after `head`) and the record-level label (after the annotations); a row of values (ARRAY_ROWS). See
 * canonical.service.ts for the whole.
 */
export type CanonicalImageRecordRow = [
  id: number,
  filename: string,
  /** `{"id":…,"split":…,"media":{"uri":"…/images/file/` */
  head: string,
  /** `","mime_type":…,"filename":…},"annotations":[` */
  media: string,
  /** The annotations as JSON objects joined by commas, in id order (null: none). */
  annotations: string | null,
  /** `,"spans":null,"value":null,"metadata":{…}}` */
  tail: string,
];

/** Keyset pages of image records for the canonical stream: bounded reads, never a whole project at once. */
/** What the canonical export writes of a sample. */
export interface CanonicalSampleRow {
  id: number;
  modality: SampleModality;
  split: string | null;
  data: string;
  label: string | null;
  labels: string | null;
  spans: string | null;
  value: string | null;
  metadata: string | null;
  sha256: string | null;
  review_state: string;
  created_at: string;
}

export class CanonicalRepository {
  /**
   * Pages worth reading ahead of the one being written out: PostgreSQL builds them on parallel connections meanwhile
   * (100k images: 46k → 60k records/s with two); SQLite reads on this thread, where pages ahead only hold memory
   * (peak RSS 254 → 370 MB with two, and no faster).
   */
  readonly pagesAhead: number;

  constructor(private readonly db: Db) {
    this.pagesAhead = isPostgres(db) ? 2 : 0;
  }

  /**
   * A keyset page of images, each written as JSON text by the database: the stored geometry goes in unparsed and
   * strings are quoted by the database, so a million annotations never become a million row objects and an image's
   * record is four strings.
   */
  /**
   * The ids after which each page of `size` images begins, in order (the first page after 0): one pass over the
   * project's ids, so that pages can be read at once instead of each after the last.
   */
  async pageStarts(projectId: number, size: number, split?: string): Promise<number[]> {
    let ids = this.db.selectFrom('images').select(['id', sql<number>`row_number() over (order by id)`.as('n')]).where('project_id', '=', projectId);
    if (split) ids = ids.where('split', '=', split);
    const rows = await this.db.selectFrom(ids.as('t')).select('id').where(sql`n % ${size}`, '=', 0).orderBy('id').execute();
    return [0, ...rows.map((r) => r.id)];
  }

  /**
   * A page of images after the id `after`: up to the id `page.through` (a page laid out by pageStarts), or the next
   * `page.limit` of them (keyset paging).
   */
  imageRecords(projectId: number, after: number, page: { through: number } | { limit: number }, split?: string): Promise<CanonicalImageRecordRow[]> {
    const db = this.db;
    const q = (ref: string) => jsonQuote(db, sql.ref(ref));
    const annotation = sql<string>`'{"id":' || a.id || ',"label":' || coalesce(${q('c.name')}, '""') || ',"class_id":' || a.class_id || ',"type":' || ${q('a.annotation_type')} || ',"geometry":' || a.geometry || ',"confidence":' || coalesce(cast(a.confidence as text), 'null') || ',"source":' || ${q('a.source')} || ',"status":' || ${q('a.status')} || ',"attributes":' || coalesce(a.attributes, '{}') || ',"group_id":' || coalesce(cast(a.group_id as text), 'null') || '}'`;
    let query = db
      .selectFrom('images')
      .select([
        'id',
        'filename',
        sql<string>`'{"id":"image:' || id || '","modality":"image","split":' || coalesce(${q('split')}, 'null') || ',"media":{"uri":"/api/projects/' || project_id || '/images/file/'`.as('head'),
        sql<string>`'","mime_type":' || ${q('mime_type')} || ',"sha256":' || ${q('sha256')} || ',"width":' || width || ',"height":' || height || ',"size_bytes":' || size_bytes || ',"filename":' || ${q('filename')} || '},"annotations":['`.as('media'),
        sql<string | null>`(select ${stringAgg(db, annotation, ',', sql.ref('a.id'))} from annotations a left join classes c on c.id = a.class_id where a.image_id = images.id)`.as('annotations'),
        sql<string>`',"spans":null,"value":null,"metadata":{"original_name":' || ${q('original_name')} || ',"review_state":' || ${q('review_state')} || ',"created_at":' || ${q('created_at')} || ',"image_id":' || id || '}}'`.as('tail'),
      ])
      .where('project_id', '=', projectId)
      .where('id', '>', after);
    if (split) query = query.where('split', '=', split);
    query = 'through' in page ? query.where('id', '<=', page.through) : query.limit(page.limit);
    return arrayRows<CanonicalImageRecordRow>(db, query.orderBy('id'));
  }

  /** A page of the project's samples (of one split), in id order after `afterId`. */
  samplePage(projectId: number, afterId: number, limit: number, split?: string): Promise<CanonicalSampleRow[]> {
    let query = this.db
      .selectFrom('samples')
      .select(['id', 'modality', 'split', 'data', 'label', 'labels', 'spans', 'value', 'metadata', 'sha256', 'review_state', 'created_at'])
      .where('project_id', '=', projectId)
      .where('id', '>', afterId);
    if (split) query = query.where('split', '=', split);
    return query.orderBy('id').limit(limit).execute();
  }
}
