/**
 * An annotator's tracks in their quality-control tasks on a video's frames (issues 26 and 29). Each frame's task
 * stores its own shapes: plain ones, and the keyframes of the annotator's task tracks there (a shape with `track_id`,
 * an `outside` one where the track was taken off the frame). What a frame shows is computed from all of them, as the
 * video's real tracks are (track-interpolation.logic.ts): plain shapes, then each track's shape on the frame, its
 * keyframe or interpolated. The video's real tracks are never read or written. Pure: shapes in, shapes out.
 */
import { shapeAt, type Keyframe } from '../tracks/track-interpolation.logic.js';
import type { QcShape } from './quality-control.schemas.js';

/** A shape as a task stores it: a track's keyframe may be `outside` (the track hidden from that frame on). */
export type StoredShape = QcShape & { outside?: boolean };

export interface FrameShapes {
  frame: number;
  shapes: readonly StoredShape[];
}

export interface TaskTrack {
  id: number;
  /** Keyframes by frame, each with the class it was drawn with. */
  keyframes: (Keyframe & { class_id: number })[];
}

/** The annotator's tracks over these frames' stored shapes, by track id. */
export function taskTracks(frames: readonly FrameShapes[]): TaskTrack[] {
  const byId = new Map<number, TaskTrack>();
  for (const { frame, shapes } of frames) {
    for (const s of shapes) {
      if (s.track_id === undefined) continue;
      const track = byId.get(s.track_id) ?? { id: s.track_id, keyframes: [] };
      byId.set(s.track_id, track);
      track.keyframes.push({ frame, class_id: s.class_id, annotation_type: s.annotation_type, geometry: s.geometry as Record<string, unknown>, outside: s.outside === true, occluded: false });
    }
  }
  const tracks = [...byId.values()].sort((a, b) => a.id - b.id);
  for (const t of tracks) t.keyframes.sort((a, b) => a.frame - b.frame);
  return tracks;
}

/** The track's shape on `frame` (keyframe or interpolated, in the class of the keyframe before it), or null. */
function trackShapeAt(track: TaskTrack, frame: number): QcShape | null {
  const shape = shapeAt(track.keyframes, frame);
  if (!shape) return null;
  const before = track.keyframes.filter((k) => k.frame <= frame).at(-1)!;
  return { class_id: before.class_id, annotation_type: shape.annotation_type as QcShape['annotation_type'], geometry: shape.geometry, track_id: track.id, keyframe: !shape.interpolated };
}

/** What the frame shows: its plain shapes, then each track's shape there. */
export function shapesOnFrame(tracks: readonly TaskTrack[], own: readonly StoredShape[], frame: number): QcShape[] {
  const plain = own.filter((s) => s.track_id === undefined).map(({ class_id, annotation_type, geometry }) => ({ class_id, annotation_type, geometry }));
  return [...plain, ...tracks.flatMap((t) => trackShapeAt(t, frame) ?? [])];
}

/**
 * What a save of `frame` stores, given what the frame now shows (`shapes`) and the other frames of the task set: plain
 * shapes and keyframes as sent (a track shape is a keyframe unless marked `keyframe: false`, the interpolated shape
 * sent back as it was read); a track the frame would show but the save leaves out gets an `outside` keyframe here.
 * Returns the index of a second shape of one track instead, where the save names a track twice.
 */
export function framesSave(others: readonly FrameShapes[], frame: number, shapes: readonly QcShape[]): StoredShape[] | { duplicate: number } {
  const seen = new Set<number>();
  const stored: StoredShape[] = [];
  for (const [i, s] of shapes.entries()) {
    if (s.track_id === undefined) {
      stored.push({ class_id: s.class_id, annotation_type: s.annotation_type, geometry: s.geometry });
      continue;
    }
    if (seen.has(s.track_id)) return { duplicate: i };
    seen.add(s.track_id);
    if (s.keyframe !== false) stored.push({ class_id: s.class_id, annotation_type: s.annotation_type, geometry: s.geometry, track_id: s.track_id, keyframe: true });
  }
  for (const track of taskTracks(others)) {
    if (seen.has(track.id)) continue;
    const shown = trackShapeAt(track, frame);
    if (shown) stored.push({ ...shown, keyframe: true, outside: true });
  }
  return stored;
}

/** A frame of a video with the shapes its task stores. */
export const frameShapes = (row: { frame: number | null; shapes: string }): FrameShapes => ({ frame: row.frame ?? 0, shapes: JSON.parse(row.shapes) as StoredShape[] });

/**
 * Each task's shapes as its annotator sees them: an image's as stored; a video frame's with the annotator's task
 * tracks on it (keyframes and interpolated shapes), from the stored shapes of their tasks on the same video
 * (`setOf` gives them, grouped by user and video).
 */
export function resolvedShapes<R extends { user_id: number; video_id: number | null; frame: number | null; shapes: string }>(rows: readonly R[], setOf: (row: R) => readonly R[]): QcShape[][] {
  const tracks = new Map<string, ReturnType<typeof taskTracks>>();
  return rows.map((row) => {
    if (row.video_id === null || row.frame === null) return JSON.parse(row.shapes) as QcShape[];
    const key = `${row.user_id}:${row.video_id}`;
    if (!tracks.has(key)) tracks.set(key, taskTracks(setOf(row).map(frameShapes)));
    return shapesOnFrame(tracks.get(key)!, frameShapes(row).shapes, row.frame);
  });
}
