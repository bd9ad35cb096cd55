import type { Insertable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { AnnotationsTable, ImagesTable, ProjectsTable } from '../../db/schema.js';
import type { ProjectRow } from '../projects/projects.schemas.js';

export type NewImage = Insertable<ImagesTable>;
/** An annotation whose image is named by its stored filename until the image's id is known. */
export type NewAnnotation = Omit<Insertable<AnnotationsTable>, 'image_id'>;

/** Rows per multi-row INSERT: 10 columns × 500 stays far below SQLite's 32,766 bound parameters. */
const ROWS_PER_INSERT = 500;

function chunks<T>(rows: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

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

  async deleteProject(projectId: number): Promise<void> {
    await this.db.deleteFrom('projects').where('id', '=', projectId).execute();
  }

  /** Importing projects whose importer last wrote before `before` (it was killed, or its process is gone). */
  async abandonedImports(before: string): Promise<number[]> {
    const rows = await this.db.selectFrom('projects').select('id').where('status', '=', 'importing').where('updated_at', '<', before).execute();
    return rows.map((row) => row.id);
  }
}
