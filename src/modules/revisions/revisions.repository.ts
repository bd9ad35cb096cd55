import type { Insertable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import { PreparedQuery } from '../../db/prepared-query.js';
import type { RevisionsTable } from '../../db/schema.js';
import type { PageQuery } from '../../http/pagination.js';
import type { RevisionRow } from './revisions.schemas.js';

type NewRevision = Required<Omit<Insertable<RevisionsTable>, 'id'>>;

/** Revisions are written inside the annotation writes' own transactions, on their hot path: the insert is prepared. */
export class RevisionsRepository {
  private readonly insertOne: PreparedQuery<NewRevision, unknown>;

  constructor(private readonly db: Db) {
    const columns = ['annotation_id', 'image_id', 'project_id', 'action', 'before', 'after', 'user_id', 'created_at'] as const;
    this.insertOne = new PreparedQuery(db, columns, (p) => db.insertInto('revisions').values(p));
  }

  async insert(values: NewRevision, db: Executor): Promise<void> {
    await this.insertOne.run(values, db);
  }

  /** The id of the annotation's newest revision, as the transaction sees it. */
  async lastId(annotationId: number, db: Executor): Promise<number> {
    const row = await db.selectFrom('revisions').select('id').where('annotation_id', '=', annotationId).orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    return row.id;
  }

  find(id: number): Promise<RevisionRow | undefined> {
    return this.db.selectFrom('revisions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The newest revision of an annotation: where its project and image are known after it was deleted. */
  latestOf(annotationId: number): Promise<RevisionRow | undefined> {
    return this.db.selectFrom('revisions').selectAll().where('annotation_id', '=', annotationId).orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  list(filter: { annotationId?: number; imageId?: number }, page: PageQuery): Promise<RevisionRow[]> {
    let query = this.db.selectFrom('revisions').selectAll();
    if (filter.annotationId !== undefined) query = query.where('annotation_id', '=', filter.annotationId);
    if (filter.imageId !== undefined) query = query.where('image_id', '=', filter.imageId);
    if (page.after !== undefined) query = query.where('id', '>', page.after);
    query = query.orderBy('id').limit(page.limit);
    if (page.offset) query = query.offset(page.offset);
    return query.execute();
  }

  async count(filter: { annotationId?: number; imageId?: number }): Promise<number> {
    let query = this.db.selectFrom('revisions').select((eb) => eb.fn.countAll<number>().as('n'));
    if (filter.annotationId !== undefined) query = query.where('annotation_id', '=', filter.annotationId);
    if (filter.imageId !== undefined) query = query.where('image_id', '=', filter.imageId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }
}
