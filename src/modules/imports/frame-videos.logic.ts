import type { Insertable } from 'kysely';
import type { TrackKeyframesTable, TracksTable, VideosTable } from '../../db/schema.js';
import type { ClassSpec, DatasetSource, DatasetVideo } from '../../formats/dataset.js';
import type { ImportLedger } from '../../formats/import-ledger.js';
import { GeometryError, parseGeometry, type AnnotationType } from '../../imaging/geometry.js';
import type { AttributeValue } from '../../imaging/class-specs.js';
import { videoBlobKey } from '../../storage/keys.js';

/** The rate given to a frame sequence whose dataset names none (CVAT for video, a folder of frames): timestamps are frame / 25. */
export const DEFAULT_SEQUENCE_FPS = 25;

interface VideoState {
  id: number;
  width: number;
  height: number;
  fps: number;
  declaredFrames: number;
  lastFrame: number;
  frames: Set<number>;
}

export type TrackRows = { track: Insertable<TracksTable>; keyframes: Omit<Insertable<TrackKeyframesTable>, 'track_id'>[] }[];

/**
 * The videos of an import whose items are frames (CVAT for video, MOT, an image sequence, per-frame formats with
 * track ids): a video row is made when its first frame is stored (its size is that frame's), each frame image gets
 * the video, frame number and timestamp, and at the end the video's length and its tracks, each keyframe checked as
 * the tracks API checks one (geometry on the frame size, keypoints against the class's skeleton), kept or skipped
 * with the reason in the import's ledger.
 */
export class FrameVideos {
  private readonly declared: Map<string, DatasetVideo>;
  private readonly videos = new Map<string, VideoState>();

  constructor(
    private readonly projectId: number,
    private readonly source: Pick<DatasetSource, 'videos' | 'tracks'>,
    private readonly insert: (values: Insertable<VideosTable>) => Promise<number>,
  ) {
    this.declared = new Map((source.videos ?? []).map((v) => [v.name, v]));
  }

  /** The video columns of a frame image (the video row is made with its first frame). */
  async frame(ref: { name: string; frame: number }, size: { width: number; height: number }): Promise<{ video_id: number; frame: number; timestamp_s: number }> {
    let video = this.videos.get(ref.name);
    if (!video) {
      const declared = this.declared.get(ref.name);
      const fps = declared?.fps && declared.fps > 0 ? declared.fps : DEFAULT_SEQUENCE_FPS;
      const id = await this.insert({
        project_id: this.projectId,
        name: ref.name.slice(0, 255),
        sha256: '',
        mime_type: 'image/x-frame-sequence',
        size_bytes: 0,
        // No file: the frames are the images. A key under the project that holds nothing, so a delete of the video is a no-op.
        blob_key: videoBlobKey(this.projectId, 'imported-sequence', 'frames', 'none'),
        fps,
        frame_count: 0,
        width: size.width,
        height: size.height,
        duration_s: 0,
        start_s: 0,
        step: 1,
        status: 'ready',
        error: null,
        job_id: null,
        created_by: null,
        created_at: new Date().toISOString(),
      });
      video = { id, width: size.width, height: size.height, fps, declaredFrames: declared?.frameCount ?? 0, lastFrame: -1, frames: new Set() };
      this.videos.set(ref.name, video);
    }
    video.lastFrame = Math.max(video.lastFrame, ref.frame);
    video.frames.add(ref.frame);
    return { video_id: video.id, frame: ref.frame, timestamp_s: ref.frame / video.fps };
  }

  private frameCount(video: VideoState): number {
    return Math.max(video.declaredFrames, video.lastFrame + 1);
  }

  /** Records each video's length (frames declared, or up to its last frame). */
  async finish(setLength: (values: [videoId: number, frameCount: number, durationS: number]) => Promise<void>): Promise<void> {
    for (const video of this.videos.values()) {
      const frames = this.frameCount(video);
      await setLength([video.id, frames, frames / video.fps]);
    }
  }

  /** The rows of the dataset's tracks, each keyframe kept or skipped (with why) in the ledger. */
  async trackRows(
    ledger: ImportLedger,
    classId: (name: string) => Promise<number>,
    classSpecs: Map<string, ClassSpec> | undefined,
    attributes: (values: Record<string, AttributeValue> | undefined, className: string, file: string, what: string) => string | null,
  ): Promise<TrackRows> {
    const rows: TrackRows = [];
    const now = new Date().toISOString();
    for (const [index, track] of (this.source.tracks ?? []).entries()) {
      const file = track.video;
      const what = `track ${track.id ?? index + 1} (class "${track.className}")`;
      const video = this.videos.get(track.video);
      if (!video) {
        for (const k of track.keyframes) ledger.skip('annotations', `${k.type} keyframe`, { file, item: `${what}: keyframe on frame ${k.frame}`, reason: 'its video has no frame in the dataset' });
        ledger.skip('tracks', '', { file, item: what, reason: 'its video has no frame in the dataset' });
        continue;
      }
      const frameCount = this.frameCount(video);
      const points = classSpecs?.get(track.className)?.skeleton?.points.length ?? null;
      const kept: TrackRows[number]['keyframes'] = [];
      let previous: string | null = null;
      const seen = new Set<number>();
      for (const k of [...track.keyframes].sort((a, b) => a.frame - b.frame)) {
        const item = `${what}: keyframe on frame ${k.frame} (${k.type})`;
        const skip = (reason: string) => ledger.skip('annotations', `${k.type} keyframe`, { file, item, reason });
        if (!Number.isInteger(k.frame) || k.frame < 0 || k.frame >= frameCount) {
          skip(`the frame is not one of the video's (0 to ${frameCount - 1})`);
          continue;
        }
        if (seen.has(k.frame)) {
          skip('the track already has a keyframe on this frame');
          continue;
        }
        if (k.type === 'classification') {
          skip('a track is made of shapes: a tag has none');
          continue;
        }
        let geometry: string;
        try {
          geometry = JSON.stringify(parseGeometry(k.type as AnnotationType, k.geometry as unknown as Record<string, unknown>, video));
        } catch (error) {
          if (!(error instanceof GeometryError)) throw error;
          // Where the object left the view its shape is never drawn: the last shape kept stands in for one off the frame.
          if (!(k.outside && previous !== null)) {
            skip(error.path.length > 0 ? `${error.message} (at ${error.path.join('.')})` : error.message);
            continue;
          }
          geometry = previous;
        }
        if (k.type === 'keypoints' && points !== null && (k.geometry as { points: unknown[] }).points.length !== points) {
          skip(`the class's skeleton has ${points} points; the keyframe has ${(k.geometry as { points: unknown[] }).points.length}`);
          continue;
        }
        seen.add(k.frame);
        previous = geometry;
        ledger.keep('annotations', `${k.type} keyframe`);
        kept.push({ frame: k.frame, annotation_type: k.type, geometry, outside: k.outside ? 1 : 0, occluded: k.occluded ? 1 : 0 });
      }
      if (kept.length === 0) {
        ledger.skip('tracks', '', { file, item: what, reason: 'none of its keyframes could be kept' });
        continue;
      }
      ledger.keep('tracks');
      rows.push({
        track: { project_id: this.projectId, video_id: video.id, class_id: await classId(track.className), attributes: attributes(track.attributes, track.className, file, what), created_at: now, updated_at: now },
        keyframes: kept,
      });
    }
    return rows;
  }
}
