import { sql, type ExpressionBuilder, type Insertable } from 'kysely';
import type { Db, Executor, Tx } from '../../db/database.js';
import { isUniqueViolation, retryOnConflict } from '../../db/errors.js';
import { lockProjectImages } from '../../db/write-locks.js';
import { isPostgres } from '../../db/sql-json.js';
import type { Database, ImagesTable, ReviewState } from '../../db/schema.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import { IMAGE_OUT_COLUMNS, type ImageListRow, type ImageOutRow, type ImageRow, type Split } from './images.schemas.js';
import { chunks } from '../../lib/batches.js';

/** Another writer took the same file name while a transaction ran; nothing was written. */
export class ImageConflictError extends Error {
  constructor() {
    super('An image with the same file name was stored meanwhile');
  }
}

/** Rows per IN list and multi-row insert: well below both dialects' bound-parameter limits. */
const CHUNK = 500;

export interface ImagePageQuery {
  split?: Split;
  review_state?: ReviewState;
  /** Only images with at least one annotation of this class. */
  class_id?: number;
  /** Only images with (true) or without (false) annotations. */
  annotated?: boolean;
  /** Only images assigned to this user (annotators of assigned-only projects). */
  assigned_to?: number;
  /** Only these images (e.g. those a quality check flagged). */
  ids?: number[];
  /** Only the frames of this video. */
  video_id?: number;
  /** Only images with an annotation whose attribute `name` holds one of these values (JSON texts). */
  attribute?: { name: string; json: string[] };
  /** Ground-truth images count as unreviewed and unlabelled (a caller they are hidden from, issue 29). */
  hideGroundTruth?: boolean;
  limit: number;
  offset?: number;
  after?: number;
}

/** What a deleted image leaves to clean up once its row is gone. */
export interface DeletedImage {
  id: number;
  project_id: number;
  sha256: string;
  blob_key: string;
  thumbnail_key: string;
}

export class ImagesRepository {
  constructor(
    private readonly db: Db,
    private readonly projects: ProjectsRepository,
  ) {}

  findWithOwner(id: number): Promise<(ImageRow & { owner_id: number }) | undefined> {
    return this.db
      .selectFrom('images')
      .innerJoin('projects', 'projects.id', 'images.project_id')
      .selectAll('images')
      .select('projects.owner_id')
      .where('images.id', '=', id)
      .executeTakeFirst();
  }

  /** Several images with their projects' owners (unknown ids are simply absent). */
  findManyWithOwner(ids: number[]): Promise<{ id: number; project_id: number; owner_id: number }[]> {
    return this.db
      .selectFrom('images')
      .innerJoin('projects', 'projects.id', 'images.project_id')
      .select(['images.id', 'images.project_id', 'projects.owner_id'])
      .where('images.id', 'in', ids)
      .execute();
  }

  /** The project's oldest image of these bytes (an import may have added several). */
  findBySha(projectId: number, sha256: string, db: Executor = this.db): Promise<ImageOutRow | undefined> {
    return db
      .selectFrom('images')
      .select(IMAGE_OUT_COLUMNS)
      .where('project_id', '=', projectId)
      .where('sha256', '=', sha256)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
  }

  findByFilename(projectId: number, filename: string): Promise<ImageRow | undefined> {
    return this.db
      .selectFrom('images')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('filename', '=', filename)
      .executeTakeFirst();
  }

  async takenFilenames(projectId: number, filenames: string[], db: Executor = this.db): Promise<Set<string>> {
    const taken = new Set<string>();
    for (const chunk of chunks(filenames, CHUNK)) {
      const rows = await db.selectFrom('images').select('filename').where('project_id', '=', projectId).where('filename', 'in', chunk).execute();
      for (const row of rows) taken.add(row.filename);
    }
    return taken;
  }

  /**
   * One page in id order. `after` seeks through the (project_id[, split], id) index. A deep `offset` first walks
   * that index for the page's ids alone (it covers them), then reads only those rows. `total`, when given, is how
   * many rows the filters match.
   */
  async listPage(projectId: number, page: ImagePageQuery, total?: number): Promise<ImageListRow[]> {
    let ids = this.filtered(projectId, page);
    if (page.after !== undefined) ids = ids.where('id', '>', page.after);
    if (!page.offset) return ids.select(IMAGE_OUT_COLUMNS).select(suggestionCount).orderBy('id').limit(page.limit).execute();
    let pageIds = ids.select('id').orderBy('id').limit(page.limit).offset(page.offset);
    // Past the middle, the page is closer to the end: walk the index backwards (offset 900,000 of 1,000,000 reads
    // 100,000 entries instead of 900,000). Needs the total of what the filters match, so only when it is known.
    if (total !== undefined && page.after === undefined && page.offset > total / 2) {
      const remaining = total - page.offset;
      if (remaining <= 0) return [];
      const take = Math.min(page.limit, remaining);
      pageIds = ids.select('id').orderBy('id', 'desc').limit(take).offset(remaining - take);
    }
    return this.db.selectFrom('images').select(IMAGE_OUT_COLUMNS).select(suggestionCount).where('id', 'in', pageIds).orderBy('id').execute();
  }

  /** How many images of the project pass the listing's filters. */
  async countFiltered(projectId: number, filters: Omit<ImagePageQuery, 'limit' | 'offset' | 'after'>): Promise<number> {
    const row = await this.filtered(projectId, filters).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  private filtered(projectId: number, filters: Omit<ImagePageQuery, 'limit' | 'offset' | 'after'>) {
    let query = this.db.selectFrom('images').where('images.project_id', '=', projectId);
    if (filters.split) query = query.where('images.split', '=', filters.split);
    if (filters.ids) query = query.where('images.id', 'in', filters.ids.length ? filters.ids : [0]);
    const hide = filters.hideGroundTruth === true;
    const groundTruth = (eb: ExpressionBuilder<Database, 'images'>) => eb('images.id', 'in', eb.selectFrom('qc_ground_truth').select('qc_ground_truth.image_id').where('qc_ground_truth.project_id', '=', projectId));
    const notGroundTruth = (eb: ExpressionBuilder<Database, 'images'>) => eb.not(groundTruth(eb));
    if (filters.review_state) {
      const state = filters.review_state;
      query = !hide ? query.where('images.review_state', '=', state)
        : state === 'unreviewed' ? query.where((eb) => eb.or([eb('images.review_state', '=', state), groundTruth(eb)]))
        : query.where('images.review_state', '=', state).where(notGroundTruth);
    }
    if (filters.video_id !== undefined) query = query.where('images.video_id', '=', filters.video_id);
    // The image's own annotation counter answers "annotated" without touching the annotations table.
    if (filters.annotated !== undefined) {
      const annotated = filters.annotated;
      query = !hide ? query.where('images.annotation_count', annotated ? '>' : '=', 0)
        : annotated ? query.where('images.annotation_count', '>', 0).where(notGroundTruth)
        : query.where((eb) => eb.or([eb('images.annotation_count', '=', 0), groundTruth(eb)]));
    }
    // Hidden ground truth has no labels to match.
    if (hide && (filters.class_id !== undefined || filters.attribute !== undefined)) query = query.where(notGroundTruth);
    if (filters.class_id !== undefined) {
      const classId = filters.class_id;
      // One probe of the (class_id, image_id) index per image.
      query = query.where((eb) =>
        eb.exists(eb.selectFrom('annotations').select('annotations.id').whereRef('annotations.image_id', '=', 'images.id').where('annotations.class_id', '=', classId)),
      );
    }
    if (filters.attribute !== undefined) {
      const { name, json } = filters.attribute;
      // The value as JSON text: SQLite's `->` gives it minified, PostgreSQL's json `->` keeps the text stored (minified by JSON.stringify).
      const value = isPostgres(this.db) ? sql<string>`((annotations.attributes)::json -> ${name})::text` : sql<string>`(annotations.attributes -> ${'$."' + name + '"'})`;
      query = query.where((eb) =>
        eb.exists(eb.selectFrom('annotations').select('annotations.id').whereRef('annotations.image_id', '=', 'images.id').where('annotations.attributes', 'is not', null).where(value, 'in', json)),
      );
    }
    if (filters.assigned_to !== undefined) {
      const userId = filters.assigned_to;
      query = query.where((eb) =>
        eb.exists(eb.selectFrom('assignments').select('assignments.id').whereRef('assignments.image_id', '=', 'images.id').where('assignments.user_id', '=', userId)),
      );
    }
    return query;
  }

  /** Whether the class belongs to the project (the list's class filter names only the project's own classes). */
  async hasClass(projectId: number, classId: number): Promise<boolean> {
    const row = await this.db.selectFrom('classes').select('id').where('id', '=', classId).where('project_id', '=', projectId).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Runs `work` in one transaction that holds the project's image-write lock (src/db/write-locks.ts), so what it
   * finds of the project's bytes stays true until it commits. A unique constraint hit inside (another request took a
   * file name meanwhile) rolls it back and surfaces as ImageConflictError, so the caller can look again and retry.
   */
  async transaction<T>(projectId: number, work: (trx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        await lockProjectImages(trx, projectId);
        return work(trx);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ImageConflictError();
      throw err;
    }
  }

  /** The project's oldest image of each of these contents that it has. */
  async findByShas(projectId: number, sha256s: string[], db: Executor = this.db): Promise<Map<string, ImageOutRow>> {
    const found = new Map<string, ImageOutRow>();
    for (const chunk of chunks(sha256s, CHUNK)) {
      const rows = await db.selectFrom('images').select(IMAGE_OUT_COLUMNS).where('project_id', '=', projectId).where('sha256', 'in', chunk).orderBy('id').execute();
      for (const row of rows) if (!found.has(row.sha256)) found.set(row.sha256, row);
    }
    return found;
  }

  /** Inserts the images of one project in the given order (so ids follow it) and counts them in the project. */
  async insertManyCounted(projectId: number, values: Insertable<ImagesTable>[], db: Executor): Promise<ImageOutRow[]> {
    const rows: ImageOutRow[] = [];
    for (const chunk of chunks(values, CHUNK)) {
      rows.push(...(await db.insertInto('images').values(chunk).returning(IMAGE_OUT_COLUMNS).execute()));
    }
    await this.projects.bumpCounters(projectId, { image_count: rows.length }, db);
    return rows;
  }

  updateSplit(id: number, split: Split | null): Promise<ImageRow> {
    return this.db.updateTable('images').set({ split }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * Deletes images of one project with their annotations and takes them off the project's counters, in one
   * transaction. Ids that are not (or no longer) in the project are skipped.
   */
  async deleteCounted(projectId: number, ids: number[]): Promise<{ images: DeletedImage[]; deletedAnnotations: number }> {
    const sorted = [...new Set(ids)].sort((a, b) => a - b);
    // Rolled back by a deadlock or serialization failure (PostgreSQL), it simply runs again.
    return retryOnConflict(() => this.db.transaction().execute(async (trx) => {
      // The images are locked first, in id order (an update that changes nothing), like annotation writes lock their
      // image before the project: concurrent deletes then never wait on each other in a cycle, and no annotation can
      // be added to or removed from these images between the count below and the delete.
      if (sorted.length > 0) {
        await trx.updateTable('images').set((eb) => ({ annotation_count: eb.ref('annotation_count') })).where('project_id', '=', projectId).where('id', 'in', sorted).execute();
      }
      ids = sorted;
      const annotated = await trx
        .selectFrom('annotations')
        .select(['image_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('image_id', 'in', ids)
        .where('project_id', '=', projectId)
        .groupBy('image_id')
        .execute();
      const deletedAnnotations = annotated.reduce((sum, r) => sum + Number(r.n), 0);
      // The project counts what the images count: accepted annotations (suggestions are not annotations yet).
      const counted = await trx.selectFrom('images').select('annotation_count').where('project_id', '=', projectId).where('id', 'in', ids).where('annotation_count', '>', 0).execute();
      if (deletedAnnotations > 0) {
        await trx.deleteFrom('annotations').where('image_id', 'in', ids).where('project_id', '=', projectId).execute();
      }
      const images = await trx
        .deleteFrom('images')
        .where('project_id', '=', projectId)
        .where('id', 'in', ids)
        .returning(['id', 'project_id', 'sha256', 'blob_key', 'thumbnail_key'])
        .execute();
      await this.projects.bumpCounters(
        projectId,
        { image_count: -images.length, annotation_count: -counted.reduce((sum, r) => sum + Number(r.annotation_count), 0), annotated_image_count: -counted.length },
        trx,
      );
      return { images, deletedAnnotations };
    }));
  }

  /** Whether an image row of the project, or a dataset version's frozen source, still refers to these bytes. */
  shaInUse(projectId: number, sha256: string, db: Executor = this.db): Promise<boolean> {
    return shaInUse(db, projectId, sha256);
  }
}

/** The image's open suggestions, for a listed row: one probe of the (image_id, status, source) index per image. */
function suggestionCount(eb: ExpressionBuilder<Database, 'images'>) {
  return eb
    .selectFrom('annotations')
    .select((sub) => sub.fn.countAll<number | string>().as('n'))
    .whereRef('annotations.image_id', '=', 'images.id')
    .where('annotations.status', '=', 'suggested')
    .$asScalar()
    .as('suggestion_count');
}

/**
 * Whether an image row of the project, or a dataset version's frozen source, still refers to these bytes: the one
 * test every writer of content-addressed image files runs before removing them.
 */
export async function shaInUse(db: Executor, projectId: number, sha256: string): Promise<boolean> {
  const image = await db.selectFrom('images').select('id').where('project_id', '=', projectId).where('sha256', '=', sha256).executeTakeFirst();
  if (image !== undefined) return true;
  const frozen = await db
    .selectFrom('version_sources')
    .innerJoin('versions', 'versions.id', 'version_sources.version_id')
    .select('version_sources.id')
    .where('version_sources.sha256', '=', sha256)
    .where('versions.project_id', '=', projectId)
    .limit(1)
    .executeTakeFirst();
  return frozen !== undefined;
}
