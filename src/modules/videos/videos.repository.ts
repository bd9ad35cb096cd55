import type { Insertable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { AnnotationsTable, VideosTable } from '../../db/schema.js';
import { chunks } from '../../lib/batches.js';
import type { LabelMode } from '../annotations/single-label.logic.js';
import { stateText } from '../annotations/annotations.schemas.js';
import type { VideoRow } from './videos.schemas.js';

export class VideosRepository {
  constructor(private readonly db: Db) {}

  insert(values: Insertable<VideosTable>): Promise<VideoRow> {
    return this.db.insertInto('videos').values(values).returningAll().executeTakeFirstOrThrow();
  }

  listForProject(projectId: number): Promise<VideoRow[]> {
    return this.db.selectFrom('videos').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  }

  find(id: number, db: Executor = this.db): Promise<VideoRow | undefined> {
    return db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findWithOwner(id: number): Promise<(VideoRow & { owner_id: number }) | undefined> {
    return this.db
      .selectFrom('videos')
      .innerJoin('projects', 'projects.id', 'videos.project_id')
      .selectAll('videos')
      .select('projects.owner_id')
      .where('videos.id', '=', id)
      .executeTakeFirst();
  }

  async setJob(id: number, jobId: number): Promise<void> {
    await this.db.updateTable('videos').set({ job_id: jobId }).where('id', '=', id).execute();
  }

  /** Ends a decoding; false when the video is gone or no longer decoding (deleted meanwhile). */
  async finish(id: number, outcome: { status: 'ready' } | { status: 'failed'; error: string }, db: Executor = this.db): Promise<boolean> {
    const error = outcome.status === 'failed' ? outcome.error.slice(0, 2000) : null;
    const result = await db.updateTable('videos').set({ status: outcome.status, error }).where('id', '=', id).where('status', '=', 'decoding').executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Videos whose decoding a stopped process left unfinished. */
  async decoding(): Promise<VideoRow[]> {
    return this.db.selectFrom('videos').selectAll().where('status', '=', 'decoding').orderBy('id').execute();
  }

  async frameIds(videoId: number): Promise<number[]> {
    const rows = await this.db.selectFrom('images').select('id').where('video_id', '=', videoId).execute();
    return rows.map((r) => r.id);
  }

  /** The ids of the project's classes with these exact names. */
  /** Whether the project is single-label (see single-label.logic.ts). */
  labelMode(projectId: number): Promise<LabelMode | undefined> {
    return this.db.selectFrom('projects').select(['project_type', 'multi_label']).where('id', '=', projectId).executeTakeFirst();
  }

  async classIdsByName(projectId: number, names: readonly string[]): Promise<Map<string, number>> {
    if (names.length === 0) return new Map();
    const rows = await this.db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).where('name', 'in', [...names]).execute();
    return new Map(rows.map((r) => [r.name, r.id]));
  }

  /**
   * The classifications a sample's time segments give its frames, in the decoding's transaction: the annotations,
   * a `create` revision each, and the project's counters (the frames were inserted with their annotation counts).
   */
  async insertFrameClassifications(
    projectId: number,
    rows: Insertable<AnnotationsTable>[],
    facts: { annotatedImages: number; userId: number | null; now: string },
    db: Executor,
  ): Promise<void> {
    if (rows.length === 0) return;
    for (const chunk of chunks(rows, 500)) {
      const ids = await db.insertInto('annotations').values(chunk).returning('id').execute();
      await db.insertInto('revisions').values(chunk.map((row, i) => ({
        annotation_id: ids[i].id, image_id: row.image_id, project_id: projectId, action: 'create' as const, before: null,
        after: stateText({ ...row, confidence: row.confidence ?? null, status: 'accepted' }), user_id: facts.userId, created_at: facts.now,
      }))).execute();
    }
    await db.updateTable('projects')
      .set((eb) => ({ annotation_count: eb('annotation_count', '+', rows.length), annotated_image_count: eb('annotated_image_count', '+', facts.annotatedImages) }))
      .where('id', '=', projectId)
      .execute();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('videos').where('id', '=', id).execute();
  }
}
