import { sql, type Insertable, type RawBuilder } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import { PreparedQuery } from '../../db/prepared-query.js';
import type { RevisionsTable } from '../../db/schema.js';
import type { PageQuery } from '../../http/pagination.js';
import type { RevisionRow } from './revisions.schemas.js';

export type NewRevision = Required<Omit<Insertable<RevisionsTable>, 'id'>>;

/** A text column as a JSON string literal, in SQL (both dialects). */
const jsonString = (column: string) => sql`'"' || replace(replace(${sql.ref(column)}, '\\', '\\\\'), '"', '\\"') || '"'`;

/** Rows per multi-row insert: well under both dialects' bound-parameter limits (8 columns each). */
const INSERT_CHUNK = 500;

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

  /** Several revisions at once (model output, bulk changes), in the caller's transaction. */
  async insertMany(values: readonly NewRevision[], db: Executor): Promise<void> {
    for (let i = 0; i < values.length; i += INSERT_CHUNK) {
      await db.insertInto('revisions').values(values.slice(i, i + INSERT_CHUNK)).execute();
    }
  }

  /**
   * A `delete` revision for every annotation of a class, written in one statement before the class's annotations
   * are deleted with it (in the same transaction). `before` is built in SQL exactly as `stateText` builds it.
   */
  async insertDeletesOfClass(classId: number, userId: number, now: string, db: Executor): Promise<void> {
    await insertFromAnnotations(db, { action: 'delete', userId, now, where: ['class_id', classId] });
  }

  /** A `delete` revision for every annotation of an image, before they are deleted (an import replacing them). */
  async insertDeletesOfImage(imageId: number, userId: number, now: string, db: Executor): Promise<void> {
    await insertFromAnnotations(db, { action: 'delete', userId, now, where: ['image_id', imageId] });
  }

  /**
   * A `create` revision for every annotation still under `fromProjectId` (an import's hidden staging project), naming
   * `projectId` (the project they are about to move to, in the same transaction). `after` is built in SQL exactly as
   * `stateText` builds it for a row with a status.
   */
  async insertCreatesOfProject(fromProjectId: number, projectId: number, userId: number, now: string, db: Executor): Promise<void> {
    await insertFromAnnotations(db, { action: 'create', userId, now, where: ['project_id', fromProjectId], projectId });
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

/** An annotation row's state as JSON text, built in SQL as `stateText` builds it (with the status, or without). */
function stateSql(withStatus: boolean): RawBuilder<string | null> {
  const status = withStatus ? sql`|| ',"status":' || ${jsonString('status')}` : sql``;
  return sql<string | null>`'{"class_id":' || cast(class_id as text) || ',"annotation_type":' || ${jsonString('annotation_type')}
    || ',"geometry":' || geometry || ',"confidence":' || coalesce(cast(confidence as text), 'null')
    || ',"source":' || ${jsonString('source')} ${status}
    || coalesce(',"attributes":' || attributes, '') || coalesce(',"group_id":' || cast(group_id as text), '') || '}'`;
}

/**
 * One revision per annotation row matching `where`, in one INSERT … SELECT: a `delete` keeps the row's state as
 * `before`, a `create` as `after`; `projectId` names the project the rows belong to from now on (else their own).
 */
async function insertFromAnnotations(
  db: Executor,
  options: { action: 'create' | 'delete'; userId: number; now: string; where: ['class_id' | 'project_id' | 'image_id', number]; projectId?: number },
): Promise<void> {
  const nothing = sql<string | null>`cast(null as text)`;
  const created = options.action === 'create';
  await db
    .insertInto('revisions')
    .columns(['annotation_id', 'image_id', 'project_id', 'action', 'before', 'after', 'user_id', 'created_at'])
    .expression(
      db
        .selectFrom('annotations')
        .select([
          'id',
          'image_id',
          options.projectId === undefined ? sql<number>`project_id`.as('project_id') : sql<number>`cast(${options.projectId} as integer)`.as('project_id'),
          sql<string>`${options.action}`.as('action'),
          (created ? nothing : stateSql(false)).as('before'),
          (created ? stateSql(true) : nothing).as('after'),
          sql<number>`cast(${options.userId} as integer)`.as('user_id'),
          sql<string>`cast(${options.now} as text)`.as('created_at'),
        ])
        .where(`annotations.${options.where[0]}`, '=', options.where[1]),
    )
    .execute();
}
