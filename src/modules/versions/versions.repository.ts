import { sql, type Insertable } from 'kysely';
import type { Db, Executor, Tx } from '../../db/database.js';
import type { VersionAnnotationsTable, VersionClassesTable, VersionImagesTable, VersionSourcesTable, VersionsTable } from '../../db/schema.js';
import type { VersionImageRow, VersionRow } from './versions.schemas.js';
import { projectTracks } from '../tracks/tracks.repository.js';

/** Rows per INSERT statement: well under SQLite's bound-parameter limit at ten columns a row. */
const INSERT_CHUNK = 500;

/** Version tables whose `version_id` is the version's own content, not a reference that blocks deletion. */
const OWN_TABLES = new Set(['version_sources', 'version_images', 'version_classes']);

export interface SourceImage {
  id: number;
  original_name: string;
  split: string | null;
  blob_key: string;
  sha256: string;
  width: number;
  height: number;
  /** The video the image is a frame of (its frames go to one split), and its frame number. */
  video_id: number | null;
  frame: number | null;
}

export interface SourceAnnotation {
  image_id: number;
  class_name: string;
  annotation_type: string;
  geometry: string;
  attributes: string | null;
  group_id: number | null;
}

export type VersionSourceRow = Omit<Insertable<VersionSourcesTable>, 'id'> & { id: number };
export type OutputAnnotation = Omit<Insertable<VersionAnnotationsTable>, 'id' | 'version_image_id'>;
export type OutputAnnotationRow = { class_name: string; class_index: number; annotation_type: string; geometry: string; attributes: string | null; group_id: number | null };
export interface OutputRow {
  image: Omit<Insertable<VersionImagesTable>, 'id'>;
  annotations: OutputAnnotation[];
}

export class VersionsRepository {
  private referencing: Promise<string[]> | null = null;

  constructor(private readonly db: Db) {}

  /** The database itself, for the reads that take an executor outside a transaction. */
  get executor(): Executor {
    return this.db;
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }

  /** The next version number of a project; the counter row is locked until the transaction ends. */
  async nextNumber(tx: Tx, projectId: number): Promise<number> {
    const row = await tx
      .insertInto('version_counters')
      .values({ project_id: projectId, last_number: 1 })
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ last_number: sql<number>`version_counters.last_number + 1` }))
      .returning('last_number')
      .executeTakeFirstOrThrow();
    return row.last_number;
  }

  insert(tx: Tx, values: Insertable<VersionsTable>): Promise<VersionRow> {
    return tx.insertInto('versions').values(values).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * The images a version takes: all of the project's but its ground-truth images (issue 29), unless the project's
   * quality control settings let ground truth train.
   */
  projectImages(tx: Executor, projectId: number): Promise<SourceImage[]> {
    return tx
      .selectFrom('images')
      .select(['id', 'original_name', 'split', 'blob_key', 'sha256', 'width', 'height', 'video_id', 'frame'])
      .where('project_id', '=', projectId)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('qc_ground_truth')
              .select('qc_ground_truth.image_id')
              .whereRef('qc_ground_truth.image_id', '=', 'images.id')
              .where((e) => e.not(e.exists(e.selectFrom('qc_settings').select('qc_settings.project_id').where('qc_settings.project_id', '=', projectId).where('qc_settings.ground_truth_in_training', '=', 1)))),
          ),
        ),
      )
      .orderBy('id')
      .execute();
  }

  projectAnnotations(tx: Executor, projectId: number, includeSuggested = false): Promise<SourceAnnotation[]> {
    let query = tx
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .select(['annotations.image_id', 'classes.name as class_name', 'annotations.annotation_type', 'annotations.geometry', 'annotations.attributes', 'annotations.group_id'])
      .where('annotations.project_id', '=', projectId);
    if (!includeSuggested) query = query.where('annotations.status', '=', 'accepted');
    return query
      .orderBy('annotations.image_id')
      .orderBy('annotations.id')
      .execute();
  }

  /** The project's tracks and keyframes, as a snapshot freezes their shapes on each frame. */
  projectTracks(tx: Executor, projectId: number) {
    return projectTracks(tx, projectId);
  }

  /** The image a recipe preview renders: the given one, else the project's first annotated image (else its first). */
  async previewImage(projectId: number, imageId: number | undefined): Promise<{ id: number; blob_key: string; width: number; height: number; video_id: number | null; frame: number | null } | undefined> {
    const base = () => this.db.selectFrom('images').select(['id', 'blob_key', 'width', 'height', 'video_id', 'frame']).where('project_id', '=', projectId);
    if (imageId !== undefined) return base().where('id', '=', imageId).executeTakeFirst();
    return (await base().where('annotation_count', '>', 0).orderBy('id').limit(1).executeTakeFirst()) ?? base().orderBy('id').limit(1).executeTakeFirst();
  }

  /** One image's accepted annotations with their class names (what a version would freeze of it). */
  imageAnnotations(imageId: number): Promise<SourceAnnotation[]> {
    return this.db
      .selectFrom('annotations')
      .innerJoin('classes', 'classes.id', 'annotations.class_id')
      .select(['annotations.image_id', 'classes.name as class_name', 'annotations.annotation_type', 'annotations.geometry', 'annotations.attributes', 'annotations.group_id'])
      .where('annotations.image_id', '=', imageId)
      .where('annotations.status', '=', 'accepted')
      .orderBy('annotations.id')
      .execute();
  }

  projectClasses(tx: Executor, projectId: number): Promise<{ name: string; color: string; skeleton: string | null; attributes: string | null }[]> {
    return tx.selectFrom('classes').select(['name', 'color', 'skeleton', 'attributes']).where('project_id', '=', projectId).orderBy('id').execute();
  }

  async insertSources(tx: Tx, rows: Omit<Insertable<VersionSourcesTable>, 'id'>[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await tx.insertInto('version_sources').values(rows.slice(i, i + INSERT_CHUNK)).execute();
  }

  async insertClasses(tx: Tx, rows: Insertable<VersionClassesTable>[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await tx.insertInto('version_classes').values(rows.slice(i, i + INSERT_CHUNK)).execute();
  }

  find(id: number): Promise<VersionRow | undefined> {
    return this.db.selectFrom('versions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(projectId: number): Promise<VersionRow[]> {
    return this.db.selectFrom('versions').selectAll().where('project_id', '=', projectId).orderBy('number').execute();
  }

  async update(id: number, values: Partial<Omit<VersionRow, 'id'>>): Promise<boolean> {
    const result = await this.db.updateTable('versions').set(values).where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Source counts per split, from the frozen snapshot. */
  async sourceCounts(versionId: number): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('version_sources')
      .select(['split', (eb) => eb.fn.countAll<number>().as('n')])
      .where('version_id', '=', versionId)
      .groupBy('split')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.split, Number(r.n)]));
  }

  sources(versionId: number, afterId: number, limit: number): Promise<VersionSourceRow[]> {
    return this.db
      .selectFrom('version_sources')
      .selectAll()
      .where('version_id', '=', versionId)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute() as Promise<VersionSourceRow[]>;
  }

  /** Every source without its annotations: the mosaic pool and the diff. */
  sourceSummaries(versionId: number): Promise<{ id: number; source_image_id: number; split: string; blob_key: string; sha256: string; width: number; height: number }[]> {
    return this.db
      .selectFrom('version_sources')
      .select(['id', 'source_image_id', 'split', 'blob_key', 'sha256', 'width', 'height'])
      .where('version_id', '=', versionId)
      .orderBy('id')
      .execute();
  }

  sourceBySourceImage(versionId: number, sourceImageId: number): Promise<VersionSourceRow | undefined> {
    return this.db
      .selectFrom('version_sources')
      .selectAll()
      .where('version_id', '=', versionId)
      .where('source_image_id', '=', sourceImageId)
      .executeTakeFirst() as Promise<VersionSourceRow | undefined>;
  }

  allSources(versionId: number): Promise<{ source_image_id: number; split: string; sha256: string; annotations: string }[]> {
    return this.db
      .selectFrom('version_sources')
      .select(['source_image_id', 'split', 'sha256', 'annotations'])
      .where('version_id', '=', versionId)
      .orderBy('id')
      .execute();
  }

  classes(versionId: number): Promise<{ index: number; name: string; color: string; skeleton: string | null; attributes: string | null }[]> {
    return this.db.selectFrom('version_classes').select(['index', 'name', 'color', 'skeleton', 'attributes']).where('version_id', '=', versionId).orderBy('index').execute();
  }

  /** Removes every output row of a version (before a (re)generation, or after a failed one). */
  async clearOutputs(versionId: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const ids = tx.selectFrom('version_images').select('id').where('version_id', '=', versionId);
      await tx.deleteFrom('version_annotations').where('version_image_id', 'in', ids).execute();
      await tx.deleteFrom('version_images').where('version_id', '=', versionId).execute();
    });
  }

  /** Writes a batch of outputs and their annotations in one transaction. */
  async insertOutputs(rows: OutputRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      const inserted: { id: number }[] = [];
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        const chunk = rows.slice(i, i + INSERT_CHUNK).map((r) => r.image);
        inserted.push(...(await tx.insertInto('version_images').values(chunk).returning('id').execute()));
      }
      const annotations = rows.flatMap((row, i) => row.annotations.map((a) => ({ ...a, version_image_id: inserted[i].id })));
      for (let i = 0; i < annotations.length; i += INSERT_CHUNK) {
        await tx.insertInto('version_annotations').values(annotations.slice(i, i + INSERT_CHUNK)).execute();
      }
    });
  }

  async outputCounts(versionId: number): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('version_images')
      .select(['split', (eb) => eb.fn.countAll<number>().as('n')])
      .where('version_id', '=', versionId)
      .groupBy('split')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.split, Number(r.n)]));
  }

  async images(versionId: number, query: { limit: number; offset?: number; after?: number; split?: string }): Promise<{ items: VersionImageRow[]; total: number }> {
    let base = this.db.selectFrom('version_images').where('version_id', '=', versionId);
    if (query.split) base = base.where('split', '=', query.split);
    let page = base.selectAll().orderBy('id').limit(query.limit);
    if (query.after !== undefined) page = page.where('id', '>', query.after);
    else if (query.offset) page = page.offset(query.offset);
    const [items, total] = await Promise.all([
      page.execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items, total: Number(total.n) };
  }

  outputHashes(versionId: number): Promise<{ filename: string; sha256: string }[]> {
    return this.db.selectFrom('version_images').select(['filename', 'sha256']).where('version_id', '=', versionId).execute();
  }

  async annotationsOf(imageIds: number[]): Promise<Map<number, OutputAnnotationRow[]>> {
    const out = new Map<number, OutputAnnotationRow[]>();
    if (imageIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('version_annotations')
      .select(['version_image_id', 'class_name', 'class_index', 'annotation_type', 'geometry', 'attributes', 'group_id'])
      .where('version_image_id', 'in', imageIds)
      .orderBy('id')
      .execute();
    for (const { version_image_id, ...row } of rows) {
      const list = out.get(version_image_id) ?? [];
      list.push(row);
      out.set(version_image_id, list);
    }
    return out;
  }

  findImage(versionId: number, imageId: number): Promise<VersionImageRow | undefined> {
    return this.db.selectFrom('version_images').selectAll().where('version_id', '=', versionId).where('id', '=', imageId).executeTakeFirst();
  }

  /**
   * Tables outside this module that name the version (exports, training runs…), found by their `version_id`
   * column so that modules added later block deletion without this one knowing them.
   */
  async references(versionId: number): Promise<{ table: string; count: number }[]> {
    this.referencing ??= this.referencingTables();
    const out: { table: string; count: number }[] = [];
    for (const table of await this.referencing) {
      const row = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where version_id = ${versionId}`.execute(this.db);
      const count = Number(row.rows[0]?.n ?? 0);
      if (count > 0) out.push({ table, count });
    }
    return out;
  }

  private async referencingTables(): Promise<string[]> {
    const tables = await this.db.introspection.getTables();
    // PostgreSQL lists every schema's tables; only the ones on this connection's search path are ours.
    const onPostgres = tables.some((t) => t.schema !== undefined);
    const current = onPostgres ? (await sql<{ s: string }>`select current_schema() as s`.execute(this.db)).rows[0]?.s : undefined;
    return tables
      .filter((t) => t.schema === current && !OWN_TABLES.has(t.name) && t.columns.some((c) => c.name === 'version_id'))
      .map((t) => t.name);
  }

  async delete(versionId: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const ids = tx.selectFrom('version_images').select('id').where('version_id', '=', versionId);
      await tx.deleteFrom('version_annotations').where('version_image_id', 'in', ids).execute();
      await tx.deleteFrom('version_images').where('version_id', '=', versionId).execute();
      await tx.deleteFrom('version_sources').where('version_id', '=', versionId).execute();
      await tx.deleteFrom('version_classes').where('version_id', '=', versionId).execute();
      await tx.deleteFrom('versions').where('id', '=', versionId).execute();
    });
  }

  /**
   * Source files of a deleted version that nothing else holds: no image of the project has those bytes and no
   * other version of the project froze them. Content-addressed, so the sha256 decides.
   */
  async unheldSources(projectId: number, sources: { sha256: string; blob_key: string }[]): Promise<{ sha256: string; blob_key: string }[]> {
    const out: { sha256: string; blob_key: string }[] = [];
    for (let i = 0; i < sources.length; i += INSERT_CHUNK) {
      const chunk = sources.slice(i, i + INSERT_CHUNK);
      const shas = chunk.map((s) => s.sha256);
      const [images, versions] = await Promise.all([
        this.db.selectFrom('images').select('sha256').where('project_id', '=', projectId).where('sha256', 'in', shas).execute(),
        this.db
          .selectFrom('version_sources')
          .innerJoin('versions', 'versions.id', 'version_sources.version_id')
          .select('version_sources.sha256')
          .where('versions.project_id', '=', projectId)
          .where('version_sources.sha256', 'in', shas)
          .execute(),
      ]);
      const held = new Set([...images, ...versions].map((r) => r.sha256));
      out.push(...chunk.filter((s) => !held.has(s.sha256)));
    }
    return out;
  }

  /** Sets a version `pending` unless it is pending or generating already; false when it is (one generation at a time). */
  async claimRegeneration(id: number): Promise<boolean> {
    const result = await this.db
      .updateTable('versions')
      .set({ status: 'pending', progress: 0, error: null, finished_at: null })
      .where('id', '=', id)
      .where('status', 'not in', ['pending', 'generating'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Fails the versions left pending or generating by a process that stopped; answers which they were. */
  failInterrupted(imageCounts: string): Promise<{ id: number; project_id: number; number: number }[]> {
    return this.db
      .updateTable('versions')
      .set({ status: 'failed', error: 'interrupted by a restart', image_counts: imageCounts, finished_at: new Date().toISOString() })
      .where('status', 'in', ['pending', 'generating'])
      .returning(['id', 'project_id', 'number'])
      .execute();
  }
}
