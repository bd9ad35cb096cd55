import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { TrackKeyframesTable, TrackSuggestionsTable, TracksTable } from '../../db/schema.js';
import { chunks } from '../../lib/batches.js';
import type { ImageToAnnotate } from '../auto-annotate/auto-annotate.repository.js';

export type TrackSuggestionRow = Selectable<TrackSuggestionsTable>;

/** A video with its project's owner and what tracking it needs: its frame size, count, step and state. */
export interface VideoToTrack {
  id: number;
  project_id: number;
  owner_id: number;
  width: number;
  height: number;
  frame_count: number;
  step: number;
  status: string;
}

export type FrameToTrack = ImageToAnnotate & { frame: number };

const CHUNK = 500;

export class TrackSuggestionsRepository {
  constructor(private readonly db: Db) {}

  findVideo(videoId: number): Promise<VideoToTrack | undefined> {
    return this.db
      .selectFrom('videos')
      .innerJoin('projects', 'projects.id', 'videos.project_id')
      .select(['videos.id', 'videos.project_id', 'projects.owner_id', 'videos.width', 'videos.height', 'videos.frame_count', 'videos.step', 'videos.status'])
      .where('videos.id', '=', videoId)
      .executeTakeFirst();
  }

  /** The video's frames (images) from `first` to `last`, by frame. */
  async frames(videoId: number, first: number, last: number): Promise<FrameToTrack[]> {
    const rows = await this.db
      .selectFrom('images')
      .select(['id', 'project_id', 'blob_key', 'sha256', 'width', 'height', 'annotation_count', 'frame'])
      .where('video_id', '=', videoId)
      .where('frame', '>=', first)
      .where('frame', '<=', last)
      .orderBy('frame')
      .execute();
    return rows.map((r) => ({ ...r, frame: r.frame! }));
  }

  async countFrames(videoId: number, first: number, last: number): Promise<number> {
    const row = await this.db
      .selectFrom('images')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('video_id', '=', videoId)
      .where('frame', '>=', first)
      .where('frame', '<=', last)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  classes(projectId: number): Promise<{ id: number; name: string }[]> {
    return this.db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).execute();
  }

  find(id: number): Promise<TrackSuggestionRow | undefined> {
    return this.db.selectFrom('track_suggestions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listForVideo(videoId: number): Promise<TrackSuggestionRow[]> {
    return this.db.selectFrom('track_suggestions').selectAll().where('video_id', '=', videoId).orderBy('id').execute();
  }

  /**
   * In one transaction: the source's open suggestions on the video that overlap frames `first`–`last` go, `rows`
   * come in. Returns how many went.
   */
  replace(videoId: number, source: string, first: number, last: number, rows: Insertable<TrackSuggestionsTable>[]): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      const removed = await tx
        .deleteFrom('track_suggestions')
        .where('video_id', '=', videoId)
        .where('source', '=', source)
        .where('first_frame', '<=', last)
        .where('last_frame', '>=', first)
        .executeTakeFirst();
      for (const chunk of chunks(rows, 100)) if (chunk.length > 0) await tx.insertInto('track_suggestions').values(chunk).execute();
      return Number(removed.numDeletedRows);
    });
  }

  /** Removes a suggestion; false when it was gone already. */
  async delete(id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('track_suggestions').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * The suggestion becomes a track with these keyframes, in one transaction; undefined when the suggestion was gone
   * (accepted or rejected meanwhile), and then nothing is written.
   */
  accept(id: number, track: Insertable<TracksTable>, keyframes: Omit<Insertable<TrackKeyframesTable>, 'track_id'>[]): Promise<Selectable<TracksTable> | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const removed = await tx.deleteFrom('track_suggestions').where('id', '=', id).executeTakeFirst();
      if (Number(removed.numDeletedRows) === 0) return undefined;
      const row = await tx.insertInto('tracks').values(track).returningAll().executeTakeFirstOrThrow();
      for (const chunk of chunks(keyframes, CHUNK)) {
        if (chunk.length > 0) await tx.insertInto('track_keyframes').values(chunk.map((k) => ({ ...k, track_id: row.id }))).execute();
      }
      return row;
    });
  }
}
