import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { AnnotationsTable, ClassesTable, CleaningRunRecordsTable, CleaningRunsTable, ImagesTable } from '../../db/schema.js';

export type ImageFullRow = Selectable<ImagesTable>;
export type AnnotationFullRow = Selectable<AnnotationsTable>;
export type ClassFullRow = Selectable<ClassesTable>;
export type CleaningRunRow = Selectable<CleaningRunsTable>;
export type CleaningRecordRow = Selectable<CleaningRunRecordsTable>;

/** A recorded annotation as it can be written back: the boxes the database computes from its geometry left out. */
function writable(row: AnnotationFullRow): Insertable<AnnotationsTable> & { id: number } {
  const { box_x, box_y, box_w, box_h, ...stored } = row;
  return stored;
}

/** Ids per IN list: well under both dialects' bound-parameter limits. */
const CHUNK = 500;

async function chunked<T>(ids: readonly number[], run: (chunk: number[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) out.push(...(await run(ids.slice(i, i + CHUNK))));
  return out;
}

/** Everything a cleaning run reads and writes, and its run records. Mutations take the caller's transaction. */
export class CleaningRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }

  async geometries(projectId: number, ids: number[]): Promise<Map<number, { annotation_type: string; geometry: string }>> {
    const rows = await chunked(ids, (chunk) =>
      this.db.selectFrom('annotations').select(['id', 'annotation_type', 'geometry']).where('project_id', '=', projectId).where('id', 'in', chunk).execute(),
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  images(projectId: number, ids: readonly number[], db: Executor = this.db): Promise<ImageFullRow[]> {
    return chunked(ids, (chunk) => db.selectFrom('images').selectAll().where('project_id', '=', projectId).where('id', 'in', chunk).orderBy('id').execute());
  }

  annotations(projectId: number, ids: readonly number[], db: Executor = this.db): Promise<AnnotationFullRow[]> {
    return chunked(ids, (chunk) => db.selectFrom('annotations').selectAll().where('project_id', '=', projectId).where('id', 'in', chunk).orderBy('id').execute());
  }

  annotationsOfImages(projectId: number, imageIds: readonly number[], db: Executor = this.db): Promise<AnnotationFullRow[]> {
    return chunked(imageIds, (chunk) =>
      db.selectFrom('annotations').selectAll().where('project_id', '=', projectId).where('image_id', 'in', chunk).orderBy('id').execute(),
    );
  }

  classes(projectId: number, ids: readonly number[], db: Executor = this.db): Promise<ClassFullRow[]> {
    return chunked(ids, (chunk) => db.selectFrom('classes').selectAll().where('project_id', '=', projectId).where('id', 'in', chunk).orderBy('id').execute());
  }

  async updateAnnotation(id: number, set: { class_id?: number; geometry?: string }, now: string, db: Executor): Promise<AnnotationFullRow | undefined> {
    return db.updateTable('annotations').set({ ...set, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async deleteAnnotations(ids: readonly number[], db: Executor): Promise<void> {
    await chunked(ids, async (chunk) => {
      await db.deleteFrom('annotations').where('id', 'in', chunk).execute();
      return [];
    });
  }

  async setImage(id: number, set: { split?: string | null; review_state?: ImageFullRow['review_state'] }, db: Executor): Promise<void> {
    await db.updateTable('images').set(set).where('id', '=', id).execute();
  }

  async renameClass(id: number, name: string, db: Executor): Promise<void> {
    await db.updateTable('classes').set({ name }).where('id', '=', id).execute();
  }

  async deleteImages(ids: readonly number[], db: Executor): Promise<void> {
    await chunked(ids, async (chunk) => {
      await db.deleteFrom('images').where('id', 'in', chunk).execute();
      return [];
    });
  }

  async deleteClasses(ids: readonly number[], db: Executor): Promise<void> {
    if (ids.length) await db.deleteFrom('classes').where('id', 'in', [...ids]).execute();
  }

  async insertImages(rows: ImageFullRow[], db: Executor): Promise<void> {
    for (let i = 0; i < rows.length; i += 100) await db.insertInto('images').values(rows.slice(i, i + 100)).execute();
  }

  async insertAnnotations(rows: AnnotationFullRow[], db: Executor): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) await db.insertInto('annotations').values(rows.slice(i, i + 200).map(writable)).execute();
  }

  async insertClasses(rows: ClassFullRow[], db: Executor): Promise<void> {
    if (rows.length) await db.insertInto('classes').values(rows).execute();
  }

  async restoreAnnotation(row: AnnotationFullRow, db: Executor): Promise<void> {
    const { id, ...rest } = writable(row);
    await db.updateTable('annotations').set(rest).where('id', '=', id).execute();
  }

  /**
   * Recomputes the counters a cleaning run moves: the touched images' annotation counts, then the project's totals
   * from those (cheap aggregates over indexed columns).
   */
  async recount(projectId: number, imageIds: readonly number[], db: Executor): Promise<void> {
    await chunked(imageIds, async (chunk) => {
      await db
        .updateTable('images')
        .set({ annotation_count: sql`(select count(*) from annotations where annotations.image_id = images.id and annotations.status = 'accepted')` })
        .where('id', 'in', chunk)
        .execute();
      return [];
    });
    await db
      .updateTable('projects')
      .set({
        image_count: sql`(select count(*) from images where images.project_id = projects.id)`,
        annotated_image_count: sql`(select count(*) from images where images.project_id = projects.id and images.annotation_count > 0)`,
        annotation_count: sql`(select coalesce(sum(annotation_count), 0) from images where images.project_id = projects.id)`,
        class_count: sql`(select count(*) from classes where classes.project_id = projects.id)`,
      })
      .where('id', '=', projectId)
      .execute();
  }

  async insertRun(values: Omit<CleaningRunRow, 'id'>, db: Executor): Promise<number> {
    return (await db.insertInto('cleaning_runs').values(values).returning('id').executeTakeFirstOrThrow()).id;
  }

  async insertRecords(rows: Omit<CleaningRecordRow, 'id'>[], db: Executor): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) await db.insertInto('cleaning_run_records').values(rows.slice(i, i + 200)).execute();
  }

  runs(projectId: number, limit: number): Promise<CleaningRunRow[]> {
    return this.db.selectFrom('cleaning_runs').selectAll().where('project_id', '=', projectId).orderBy('id', 'desc').limit(limit).execute();
  }

  findRun(id: number, db: Executor = this.db): Promise<CleaningRunRow | undefined> {
    return db.selectFrom('cleaning_runs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  records(runId: number, db: Executor = this.db): Promise<CleaningRecordRow[]> {
    return db.selectFrom('cleaning_run_records').selectAll().where('run_id', '=', runId).orderBy('id').execute();
  }

  async markRun(id: number, set: Partial<Pick<CleaningRunRow, 'status' | 'reverted_at' | 'reverted_by'>>, db: Executor = this.db): Promise<void> {
    await db.updateTable('cleaning_runs').set(set).where('id', '=', id).execute();
  }

  /** Applied runs of the project whose revert window has closed. */
  expiredRuns(projectId: number, now: string): Promise<CleaningRunRow[]> {
    return this.db.selectFrom('cleaning_runs').selectAll().where('project_id', '=', projectId).where('status', '=', 'applied').where('revertible_until', '<', now).execute();
  }

  async shaInUse(projectId: number, sha256: string): Promise<boolean> {
    return !!(await this.db.selectFrom('images').select('id').where('project_id', '=', projectId).where('sha256', '=', sha256).executeTakeFirst());
  }

  /** Ids among `ids` that exist (images, annotations or classes). */
  async existing(table: 'images' | 'annotations' | 'classes', ids: readonly number[], db: Executor): Promise<Set<number>> {
    const rows = await chunked(ids, (chunk) => db.selectFrom(table).select('id').where('id', 'in', chunk).execute());
    return new Set(rows.map((r) => r.id));
  }
}
