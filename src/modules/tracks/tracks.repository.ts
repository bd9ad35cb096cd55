import type { Insertable, Selectable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { TrackKeyframesTable, TracksTable } from '../../db/schema.js';
import { chunks } from '../../lib/batches.js';

export type TrackRow = Selectable<TracksTable>;
export type KeyframeRow = Selectable<TrackKeyframesTable>;

/** A video with what a keyframe is checked against: its project's owner and its frame size and count. */
export interface VideoTarget {
  id: number;
  project_id: number;
  owner_id: number;
  width: number;
  height: number;
  frame_count: number;
}

/** A class of a project with its skeleton and attribute specs (JSON text). */
export interface ClassSpecs {
  id: number;
  skeleton: string | null;
  attributes: string | null;
}

const CHUNK = 500;

/** A project's tracks with their class names, and their keyframes by track and frame (exports and version snapshots read them so). */
export async function projectTracks(db: Executor, projectId: number) {
  const tracks = await db
    .selectFrom('tracks')
    .innerJoin('classes', 'classes.id', 'tracks.class_id')
    .select(['tracks.id', 'tracks.video_id', 'classes.name as class_name', 'tracks.attributes'])
    .where('tracks.project_id', '=', projectId)
    .orderBy('tracks.video_id')
    .orderBy('tracks.id')
    .execute();
  const keyframes = await db
    .selectFrom('track_keyframes')
    .select(['track_id', 'frame', 'annotation_type', 'geometry', 'outside', 'occluded'])
    .where('track_id', 'in', (eb) => eb.selectFrom('tracks').select('id').where('project_id', '=', projectId))
    .orderBy('track_id')
    .orderBy('frame')
    .execute();
  return { tracks, keyframes };
}

export class TracksRepository {
  constructor(private readonly db: Db) {}

  findVideo(videoId: number): Promise<VideoTarget | undefined> {
    return this.db
      .selectFrom('videos')
      .innerJoin('projects', 'projects.id', 'videos.project_id')
      .select(['videos.id', 'videos.project_id', 'projects.owner_id', 'videos.width', 'videos.height', 'videos.frame_count'])
      .where('videos.id', '=', videoId)
      .executeTakeFirst();
  }

  findClass(projectId: number, classId: number): Promise<ClassSpecs | undefined> {
    return this.db.selectFrom('classes').select(['id', 'skeleton', 'attributes']).where('id', '=', classId).where('project_id', '=', projectId).executeTakeFirst();
  }

  find(id: number): Promise<TrackRow | undefined> {
    return this.db.selectFrom('tracks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listForVideo(videoId: number): Promise<TrackRow[]> {
    return this.db.selectFrom('tracks').selectAll().where('video_id', '=', videoId).orderBy('id').execute();
  }

  /** The keyframes of these tracks, by track and frame. */
  async keyframes(trackIds: number[]): Promise<KeyframeRow[]> {
    const rows: KeyframeRow[] = [];
    for (const chunk of chunks(trackIds, CHUNK)) {
      rows.push(...(await this.db.selectFrom('track_keyframes').selectAll().where('track_id', 'in', chunk).orderBy('track_id').orderBy('frame').execute()));
    }
    return rows;
  }

  /** The video and frame an image is, or undefined for an image that is no frame. */
  async frameOf(imageId: number): Promise<{ video_id: number; frame: number } | undefined> {
    const row = await this.db.selectFrom('images').select(['video_id', 'frame']).where('id', '=', imageId).executeTakeFirst();
    return row && row.video_id !== null && row.frame !== null ? { video_id: row.video_id, frame: row.frame } : undefined;
  }

  insert(track: Insertable<TracksTable>, keyframes: Omit<Insertable<TrackKeyframesTable>, 'track_id'>[]): Promise<TrackRow> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx.insertInto('tracks').values(track).returningAll().executeTakeFirstOrThrow();
      await this.putKeyframes(tx, row.id, keyframes);
      return row;
    });
  }

  /** Sets the class and attributes given, removes and upserts keyframes, in one transaction. */
  update(id: number, changes: Partial<Pick<TracksTable, 'class_id' | 'attributes'>>, keyframes: Omit<Insertable<TrackKeyframesTable>, 'track_id'>[], deleteFrames: number[]): Promise<void> {
    return this.db.transaction().execute(async (tx) => {
      await tx.updateTable('tracks').set({ ...changes, updated_at: new Date().toISOString() }).where('id', '=', id).execute();
      for (const chunk of chunks([...deleteFrames, ...keyframes.map((k) => k.frame)], CHUNK)) {
        await tx.deleteFrom('track_keyframes').where('track_id', '=', id).where('frame', 'in', chunk).execute();
      }
      await this.putKeyframes(tx, id, keyframes);
    });
  }

  async countKeyframes(id: number): Promise<number> {
    const row = await this.db.selectFrom('track_keyframes').select((eb) => eb.fn.countAll<number>().as('n')).where('track_id', '=', id).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('tracks').where('id', '=', id).execute();
  }

  private async putKeyframes(tx: Executor, trackId: number, keyframes: Omit<Insertable<TrackKeyframesTable>, 'track_id'>[]): Promise<void> {
    for (const chunk of chunks(keyframes, CHUNK)) {
      if (chunk.length > 0) await tx.insertInto('track_keyframes').values(chunk.map((k) => ({ ...k, track_id: trackId }))).execute();
    }
  }
}
