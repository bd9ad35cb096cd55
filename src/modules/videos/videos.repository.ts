import type { Insertable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { VideosTable } from '../../db/schema.js';
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

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('videos').where('id', '=', id).execute();
  }
}
