import { sql, type Insertable, type RawBuilder } from 'kysely';
import type { Db, Executor, Tx } from '../../db/database.js';
import { lockProjectImages } from '../../db/write-locks.js';
import type { AnnotationsTable, ImagesTable, ProjectsTable, TrackKeyframesTable, TracksTable, VideosTable } from '../../db/schema.js';
import type { ProjectRow } from '../projects/projects.schemas.js';
import { BulkInsert } from '../../db/bulk-insert.js';
import { chunks } from '../../lib/batches.js';
import { shaInUse } from '../images/images.repository.js';
import type { ProjectImageOfBytes, StagedEntry } from './entry-pairing.logic.js';
import type { ComparableAnnotation } from './annotation-match.logic.js';

export type NewImage = Insertable<ImagesTable>;
/** An annotation whose image is named by its stored filename until the image's id is known. */
export type NewAnnotation = Omit<Insertable<AnnotationsTable>, 'image_id'>;

/** Ids per `IN (…)` list and rows per update batch. */
const IDS_PER_LIST = 500;

const IMAGE_COLUMNS = [
  'project_id', 'filename', 'original_name', 'split', 'width', 'height', 'sha256', 'mime_type', 'size_bytes', 'blob_key', 'thumbnail_key', 'annotation_count', 'created_at',
  'video_id', 'frame', 'timestamp_s',
] as const satisfies readonly (keyof NewImage)[];
const ANNOTATION_COLUMNS = [
  'image_id', 'project_id', 'class_id', 'annotation_type', 'geometry', 'confidence', 'source', 'created_at', 'updated_at', 'attributes', 'group_id',
] as const satisfies readonly (keyof Insertable<AnnotationsTable>)[];


/**
 * Writes of an import. The project row is created first and removed (with everything under it, by cascade) when the
 * import fails; images and annotations are written in short transactions of one batch each, so a long import never
 * holds a write transaction open.
 */
export class ImportsRepository {
  /** Images and annotations go in through the one bulk path (src/db/bulk-insert.ts). */
  private readonly images: BulkInsert<'images', (typeof IMAGE_COLUMNS)[number], 'id' | 'filename'>;
  private readonly annotations: BulkInsert<'annotations', (typeof ANNOTATION_COLUMNS)[number], never>;

  constructor(private readonly db: Db) {
    this.images = new BulkInsert(db, 'images', IMAGE_COLUMNS, ['id', 'filename']);
    this.annotations = new BulkInsert(db, 'annotations', ANNOTATION_COLUMNS, []);
  }

  createProject(values: Insertable<ProjectsTable>): Promise<ProjectRow> {
    return this.db.insertInto('projects').values(values).returningAll().executeTakeFirstOrThrow();
  }

  /** A class with the skeleton and attribute specs the dataset declares for it (JSON text, null when none). */
  async insertClass(projectId: number, name: string, color: string, specs: { skeleton: string | null; attributes: string | null }): Promise<number> {
    const row = await this.db
      .insertInto('classes')
      .values({ project_id: projectId, name, color, created_at: new Date().toISOString(), ...specs })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** One batch of images with their annotations (keyed by the image's filename), in one transaction. */
  async insertBatch(images: NewImage[], annotations: Map<string, NewAnnotation[]>): Promise<void> {
    if (images.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      const ids = await this.storeImages(images, trx);
      const rows: Insertable<AnnotationsTable>[] = [];
      for (const [filename, list] of annotations) {
        const imageId = ids.get(filename)!;
        for (const annotation of list) rows.push({ ...annotation, image_id: imageId });
      }
      await this.annotations.run(rows.map(annotationColumns), trx);
    });
  }

  /** Images in one transaction; their ids by stored filename. */
  async insertImages(images: NewImage[]): Promise<Map<string, number>> {
    if (images.length === 0) return new Map();
    return this.db.transaction().execute((trx) => this.storeImages(images, trx));
  }

  /** Annotations whose images are stored, in one transaction. */
  async insertAnnotations(rows: Insertable<AnnotationsTable>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.transaction().execute((trx) => this.annotations.run(rows.map(annotationColumns), trx));
  }

  private async storeImages(images: NewImage[], trx: Tx): Promise<Map<string, number>> {
    const ids = new Map<string, number>();
    const rows = await this.images.run(
      images.map((image) => ({ ...image, split: image.split ?? null, annotation_count: image.annotation_count ?? 0, video_id: image.video_id ?? null, frame: image.frame ?? null, timestamp_s: image.timestamp_s ?? null })),
      trx,
    );
    for (const row of rows) ids.set(row.filename, row.id);
    return ids;
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
  /**
   * Makes the imported project ready with its counts. A classification dataset where some image holds two classes
   * makes a multi-label project (issue 30), so that the import keeps every label.
   */
  async publish(projectId: number, counts: Record<'image_count' | 'annotated_image_count' | 'annotation_count' | 'class_count', number>): Promise<ProjectRow> {
    const twoClasses = await this.db
      .selectFrom('annotations')
      .select('image_id')
      .where('project_id', '=', projectId)
      .where('annotation_type', '=', 'classification')
      .groupBy('image_id')
      .having((eb) => eb.fn.countAll(), '>', 1)
      .limit(1)
      .executeTakeFirst();
    return this.db
      .updateTable('projects')
      .set({ ...counts, ...(twoClasses ? { multi_label: 1 } : {}), status: 'ready', updated_at: new Date().toISOString() })
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

  /** The annotations (and tracks) of class `fromClassId` become annotations of `toClassId`. */
  async remapClass(fromClassId: number, toClassId: number, db: Executor): Promise<void> {
    await db.updateTable('annotations').set({ class_id: toClassId }).where('class_id', '=', fromClassId).execute();
    await db.updateTable('tracks').set({ class_id: toClassId }).where('class_id', '=', fromClassId).execute();
  }

  /** A video of an imported frame sequence (no file of its own: its frames are the images). */
  async insertVideo(values: Insertable<VideosTable>): Promise<number> {
    const row = await this.db.insertInto('videos').values(values).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async setVideoLength(videoId: number, frameCount: number, durationS: number): Promise<void> {
    await this.db.updateTable('videos').set({ frame_count: frameCount, duration_s: durationS }).where('id', '=', videoId).execute();
  }

  /** Tracks with their keyframes, in one transaction. */
  async insertTracks(tracks: { track: Insertable<TracksTable>; keyframes: Omit<Insertable<TrackKeyframesTable>, 'track_id'>[] }[]): Promise<void> {
    if (tracks.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const { track, keyframes } of tracks) {
        const row = await trx.insertInto('tracks').values(track).returning('id').executeTakeFirstOrThrow();
        for (const chunk of chunks(keyframes, IDS_PER_LIST)) {
          if (chunk.length > 0) await trx.insertInto('track_keyframes').values(chunk.map((k) => ({ ...k, track_id: row.id }))).execute();
        }
      }
    });
  }

  async moveClass(classId: number, projectId: number, color: string, db: Executor): Promise<void> {
    await db.updateTable('classes').set({ project_id: projectId, color }).where('id', '=', classId).execute();
  }

  /** Holds the project's image-write lock until the transaction ends (see src/db/write-locks.ts); taken first. */
  lockImageWrites(projectId: number, tx: Tx): Promise<void> {
    return lockProjectImages(tx, projectId);
  }

  /**
   * The staged images whose bytes occur more than once among them and the project's images (`projectId`, when the
   * import goes into one), in dataset order; and the project's images of those bytes, oldest first.
   */
  async bytesShared(stagingId: number, projectId: number | null, db: Executor = this.db): Promise<{ staged: StagedEntry[]; existing: ProjectImageOfBytes[] }> {
    const staged = await db
      .selectFrom('images as s')
      .select(['s.id', 's.sha256', 's.original_name'])
      .where('s.project_id', '=', stagingId)
      .where((eb) => {
        const twice = eb.exists(
          eb.selectFrom('images as d').select('d.id').where('d.project_id', '=', stagingId).whereRef('d.sha256', '=', 's.sha256').whereRef('d.id', '!=', 's.id'),
        );
        if (projectId === null) return twice;
        return eb.or([twice, eb.exists(eb.selectFrom('images as t').select('t.id').where('t.project_id', '=', projectId).whereRef('t.sha256', '=', 's.sha256'))]);
      })
      .orderBy('s.id')
      .execute();
    if (projectId === null || staged.length === 0) return { staged, existing: [] };
    const existing = await db
      .selectFrom('images as t')
      .select(['t.id', 't.sha256', 't.original_name'])
      .where('t.project_id', '=', projectId)
      .where('t.sha256', 'in', (eb) => eb.selectFrom('images as s').select('s.sha256').where('s.project_id', '=', stagingId))
      .orderBy('t.id')
      .execute();
    return { staged, existing };
  }

  /**
   * Each staged image of `merges` gives the project's image it is paired with its annotations (and its split, where
   * that has none), then goes. Returns how many of those images had no annotation before and have some now.
   */
  async mergeEntries(merges: { staged: number; into: number }[], db: Executor): Promise<number> {
    let annotatedNow = 0;
    for (const chunk of chunks(merges, IDS_PER_LIST)) {
      const stagedIds = chunk.map((m) => m.staged);
      const staged = new Map(
        (await db.selectFrom('images').select(['id', 'annotation_count', 'split']).where('id', 'in', stagedIds).execute()).map((row) => [row.id, row]),
      );
      const pairs = chunk.map((m) => ({ ...m, ...staged.get(m.staged)! }));
      type Pair = (typeof pairs)[number];
      /** `case <column> when <key> then <value> … end` over the chunk's pairs. */
      const cases = <T>(column: string, key: (p: Pair) => number, value: (p: Pair) => RawBuilder<T>) =>
        sql<T>`case ${sql.ref(column)} ${sql.join(pairs.map((p) => sql`when ${key(p)} then ${value(p)}`), sql` `)} end`;
      const updated = await db
        .updateTable('images')
        .set({
          annotation_count: sql<number>`annotation_count + ${cases('id', (p) => p.into, (p) => sql<number>`cast(${p.annotation_count} as integer)`)}`,
          split: sql<string | null>`coalesce(split, ${cases('id', (p) => p.into, (p) => sql<string | null>`cast(${p.split} as text)`)})`,
        })
        .where('id', 'in', chunk.map((m) => m.into))
        .returning(['id', 'annotation_count'])
        .execute();
      // Read after the update, which holds those rows: a count equal to the staged one was 0 before.
      const added = new Map(pairs.map((p) => [p.into, p.annotation_count]));
      annotatedNow += updated.filter((row) => added.get(row.id)! > 0 && row.annotation_count === added.get(row.id)).length;
      await db
        .updateTable('annotations')
        .set({ image_id: cases('image_id', (p) => p.staged, (p) => sql<number>`cast(${p.into} as integer)`) })
        .where('image_id', 'in', stagedIds)
        .execute();
      // By then nothing refers to them: their annotations moved, and nothing else refers to a staged image.
      await db.deleteFrom('images').where('id', 'in', stagedIds).execute();
    }
    return annotatedNow;
  }

  /** The annotations of these images, as the conflict check of an import compares them. */
  async annotationsOfImages(imageIds: number[], db: Executor): Promise<ComparableAnnotation[]> {
    const rows: ComparableAnnotation[] = [];
    for (const chunk of chunks(imageIds, IDS_PER_LIST)) {
      rows.push(...(await db.selectFrom('annotations').select(['id', 'image_id', 'class_id', 'annotation_type', 'geometry']).where('image_id', 'in', chunk).orderBy('id').execute()));
    }
    return rows;
  }

  /**
   * The classifications of a project's images, or of these images, oldest first, with their class's and image's
   * names (what a single-label project keeps one of per image).
   */
  async classifications(of: { projectId: number } | { imageIds: number[] }, db: Executor): Promise<{ id: number; image_id: number; class_name: string; original_name: string }[]> {
    const query = (scope: (q: ReturnType<typeof base>) => ReturnType<typeof base>) => scope(base()).orderBy('annotations.id').execute();
    const base = () => db
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .innerJoin('images', 'images.id', 'annotations.image_id')
      .select(['annotations.id', 'annotations.image_id', 'classes.name as class_name', 'images.original_name'])
      .where('annotations.annotation_type', '=', 'classification');
    if ('projectId' in of) return query((q) => q.where('annotations.project_id', '=', of.projectId));
    const rows = [];
    for (const chunk of chunks(of.imageIds, IDS_PER_LIST)) rows.push(...(await query((q) => q.where('annotations.image_id', 'in', chunk))));
    return rows;
  }

  /** Deletes these annotations and lowers their images' counts by as many. */
  async deleteAnnotations(rows: { id: number; image_id: number }[], db: Executor): Promise<void> {
    const perImage = new Map<number, number>();
    for (const row of rows) perImage.set(row.image_id, (perImage.get(row.image_id) ?? 0) + 1);
    for (const chunk of chunks(rows.map((r) => r.id), IDS_PER_LIST)) await db.deleteFrom('annotations').where('id', 'in', chunk).execute();
    for (const [imageId, n] of perImage) {
      await db.updateTable('images').set((eb) => ({ annotation_count: eb('annotation_count', '-', n) })).where('id', '=', imageId).execute();
    }
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
    for (const chunk of chunks(filenames, IDS_PER_LIST)) {
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
    await db.updateTable('videos').set({ project_id: projectId }).where('project_id', '=', stagingId).execute();
    await db.updateTable('tracks').set({ project_id: projectId }).where('project_id', '=', stagingId).execute();
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

/** An annotation row with every column the bulk insert writes (null where the reader gave none). */
const annotationColumns = (row: Insertable<AnnotationsTable>) => ({ ...row, confidence: row.confidence ?? null, attributes: row.attributes ?? null, group_id: row.group_id ?? null });
