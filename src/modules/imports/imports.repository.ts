import { sql, type Insertable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { AnnotationsTable, ImagesTable, ProjectsTable } from '../../db/schema.js';
import type { ProjectRow } from '../projects/projects.schemas.js';
import { chunks } from '../../lib/batches.js';
import { shaInUse } from '../images/images.repository.js';

export type NewImage = Insertable<ImagesTable>;
/** An annotation whose image is named by its stored filename until the image's id is known. */
export type NewAnnotation = Omit<Insertable<AnnotationsTable>, 'image_id'>;

/** Rows per multi-row INSERT: 10 columns × 500 stays far below SQLite's 32,766 bound parameters. */
const ROWS_PER_INSERT = 500;


/**
 * Writes of an import. The project row is created first and removed (with everything under it, by cascade) when the
 * import fails; images and annotations are written in short transactions of one batch each, so a long import never
 * holds a write transaction open.
 */
export class ImportsRepository {
  constructor(private readonly db: Db) {}

  createProject(values: Insertable<ProjectsTable>): Promise<ProjectRow> {
    return this.db.insertInto('projects').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async insertClass(projectId: number, name: string, color: string): Promise<number> {
    const row = await this.db
      .insertInto('classes')
      .values({ project_id: projectId, name, color, created_at: new Date().toISOString() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** One batch of images with their annotations (keyed by the image's filename), in one transaction. */
  async insertBatch(images: NewImage[], annotations: Map<string, NewAnnotation[]>): Promise<void> {
    if (images.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      const ids = new Map<string, number>();
      for (const chunk of chunks(images, ROWS_PER_INSERT)) {
        const rows = await trx.insertInto('images').values(chunk).returning(['id', 'filename']).execute();
        for (const row of rows) ids.set(row.filename, row.id);
      }
      const rows: Insertable<AnnotationsTable>[] = [];
      for (const [filename, list] of annotations) {
        const imageId = ids.get(filename)!;
        for (const annotation of list) rows.push({ ...annotation, image_id: imageId });
      }
      for (const chunk of chunks(rows, ROWS_PER_INSERT)) await trx.insertInto('annotations').values(chunk).execute();
    });
  }

  /** Images in one transaction; their ids by stored filename. */
  async insertImages(images: NewImage[]): Promise<Map<string, number>> {
    const ids = new Map<string, number>();
    if (images.length === 0) return ids;
    await this.db.transaction().execute(async (trx) => {
      for (const chunk of chunks(images, ROWS_PER_INSERT)) {
        const rows = await trx.insertInto('images').values(chunk).returning(['id', 'filename']).execute();
        for (const row of rows) ids.set(row.filename, row.id);
      }
    });
    return ids;
  }

  /** Annotations whose images are stored, in one transaction. */
  async insertAnnotations(rows: Insertable<AnnotationsTable>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const chunk of chunks(rows, ROWS_PER_INSERT)) await trx.insertInto('annotations').values(chunk).execute();
    });
  }

  /** Per-image annotation counts, in one transaction. */
  async setImageCounts(counts: [imageId: number, annotations: number][]): Promise<void> {
    if (counts.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, count] of counts) await trx.updateTable('images').set({ annotation_count: count }).where('id', '=', id).execute();
    });
  }

  /** The importer is alive: an importing project whose `updated_at` stops moving is removed by the recovery. */
  async heartbeat(projectId: number): Promise<void> {
    await this.db.updateTable('projects').set({ updated_at: new Date().toISOString() }).where('id', '=', projectId).where('status', '=', 'importing').execute();
  }

  /**
   * Makes the project visible with its counters, in one statement: nothing else writes to a project that is still
   * being imported (it is hidden), so the counters are those of the rows written.
   */
  async publish(projectId: number, counts: Record<'image_count' | 'annotated_image_count' | 'annotation_count' | 'class_count', number>): Promise<ProjectRow> {
    return this.db
      .updateTable('projects')
      .set({ ...counts, status: 'ready', updated_at: new Date().toISOString() })
      .where('id', '=', projectId)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async deleteProject(projectId: number, db: Executor = this.db): Promise<void> {
    await db.deleteFrom('projects').where('id', '=', projectId).execute();
  }

  // An import into an existing project writes its rows under a hidden staging project (as an import of a new one
  // does), then moves them into the project in one transaction with the methods below.

  /** The project's classes, oldest first. */
  classesOf(projectId: number, db: Executor = this.db): Promise<{ id: number; name: string }[]> {
    return db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  /** The annotations of class `fromClassId` become annotations of `toClassId`. */
  async remapClass(fromClassId: number, toClassId: number, db: Executor): Promise<void> {
    await db.updateTable('annotations').set({ class_id: toClassId }).where('class_id', '=', fromClassId).execute();
  }

  async moveClass(classId: number, projectId: number, color: string, db: Executor): Promise<void> {
    await db.updateTable('classes').set({ project_id: projectId, color }).where('id', '=', classId).execute();
  }

  /** Images of the project whose bytes are also among the staging project's images. */
  async imagesSharedWith(stagingId: number, projectId: number, db: Executor): Promise<number[]> {
    const rows = await db
      .selectFrom('images as t')
      .innerJoin('images as s', (join) => join.onRef('s.sha256', '=', 't.sha256').on('s.project_id', '=', stagingId))
      .select('t.id')
      .where('t.project_id', '=', projectId)
      .execute();
    return rows.map((row) => row.id);
  }

  /**
   * Staging images whose bytes the project already has give that image their annotations (and their split, where it
   * has none), then go. Returns how many of those images had no annotation before and have some now.
   */
  async mergeIntoExisting(stagingId: number, projectId: number, db: Executor): Promise<number> {
    await db
      .updateTable('images')
      .set({
        annotation_count: sql<number>`images.annotation_count + (select s.annotation_count from images as s where s.project_id = ${stagingId} and s.sha256 = images.sha256)`,
        split: sql<string | null>`coalesce(images.split, (select s.split from images as s where s.project_id = ${stagingId} and s.sha256 = images.sha256))`,
      })
      .where('project_id', '=', projectId)
      .where('sha256', 'in', (eb) => eb.selectFrom('images as s').select('s.sha256').where('s.project_id', '=', stagingId))
      .execute();
    // Counted after the update, which holds those rows: a count equal to the staged one was 0 before.
    const annotated = await db
      .selectFrom('images as t')
      .innerJoin('images as s', (join) => join.onRef('s.sha256', '=', 't.sha256').on('s.project_id', '=', stagingId))
      .select((eb) => eb.fn.countAll().as('n'))
      .where('t.project_id', '=', projectId)
      .where('s.annotation_count', '>', 0)
      .whereRef('t.annotation_count', '=', 's.annotation_count')
      .executeTakeFirstOrThrow();
    await db
      .updateTable('annotations')
      .set({ image_id: sql<number>`(select t.id from images as s inner join images as t on t.sha256 = s.sha256 and t.project_id = ${projectId} where s.id = annotations.image_id)` })
      .where('project_id', '=', stagingId)
      .where('image_id', 'in', (eb) =>
        eb
          .selectFrom('images as s')
          .innerJoin('images as t', (join) => join.onRef('t.sha256', '=', 's.sha256').on('t.project_id', '=', projectId))
          .select('s.id')
          .where('s.project_id', '=', stagingId))
      .execute();
    await db
      .deleteFrom('images')
      .where('project_id', '=', stagingId)
      .where('sha256', 'in', (eb) => eb.selectFrom('images as t').select('t.sha256').where('t.project_id', '=', projectId))
      .execute();
    return Number(annotated.n);
  }

  /** Staging images whose stored name the project already uses. */
  filenameClashes(stagingId: number, projectId: number, db: Executor): Promise<{ id: number; original_name: string; sha256: string; blob_key: string }[]> {
    return db
      .selectFrom('images as s')
      .innerJoin('images as t', (join) => join.onRef('t.filename', '=', 's.filename').on('t.project_id', '=', projectId))
      .select(['s.id', 's.original_name', 's.sha256', 's.blob_key'])
      .where('s.project_id', '=', stagingId)
      .orderBy('s.id')
      .execute();
  }

  /** Which of `filenames` images of these projects use. */
  async takenFilenames(projectIds: number[], filenames: string[], db: Executor): Promise<Set<string>> {
    const taken = new Set<string>();
    for (const chunk of chunks(filenames, ROWS_PER_INSERT)) {
      const rows = await db.selectFrom('images').select('filename').where('project_id', 'in', projectIds).where('filename', 'in', chunk).execute();
      for (const row of rows) taken.add(row.filename);
    }
    return taken;
  }

  async renameImage(imageId: number, filename: string, db: Executor): Promise<void> {
    await db.updateTable('images').set({ filename }).where('id', '=', imageId).execute();
  }

  /** Moves the staging project's images and annotations into the project; returns what moved. */
  async moveRows(stagingId: number, projectId: number, db: Executor): Promise<{ images: number; annotatedImages: number; annotations: number }> {
    const annotated = await db
      .selectFrom('images')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('project_id', '=', stagingId)
      .where('annotation_count', '>', 0)
      .executeTakeFirstOrThrow();
    const images = await db.updateTable('images').set({ project_id: projectId }).where('project_id', '=', stagingId).executeTakeFirst();
    const annotations = await db.updateTable('annotations').set({ project_id: projectId }).where('project_id', '=', stagingId).executeTakeFirst();
    return { images: Number(images.numUpdatedRows), annotatedImages: Number(annotated.n), annotations: Number(annotations.numUpdatedRows) };
  }

  /** Whether the project has an image of these bytes. */
  async hasImage(projectId: number, sha256: string): Promise<boolean> {
    const image = await this.db.selectFrom('images').select('id').where('project_id', '=', projectId).where('sha256', '=', sha256).executeTakeFirst();
    return image !== undefined;
  }

  /** Whether a row of the project (an image, or a source a version keeps) still refers to these bytes. */
  shaInUse(projectId: number, sha256: string): Promise<boolean> {
    return shaInUse(this.db, projectId, sha256);
  }

  /** Importing projects whose importer last wrote before `before` (it was killed, or its process is gone). */
  async abandonedImports(before: string): Promise<number[]> {
    const rows = await this.db.selectFrom('projects').select('id').where('status', '=', 'importing').where('updated_at', '<', before).execute();
    return rows.map((row) => row.id);
  }
}
