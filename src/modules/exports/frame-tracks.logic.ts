import type { Annotation, DatasetTrack, DatasetVideo, Shape, TrackKeyframe } from '../../formats/dataset.js';
import type { AttributeValue } from '../../imaging/class-specs.js';
import { shapeAt, type Keyframe } from '../tracks/track-interpolation.logic.js';

interface VideoRow {
  id: number;
  name: string;
  fps: number;
  frame_count: number;
  width: number;
  height: number;
}
interface TrackRow {
  id: number;
  video_id: number;
  class_name: string;
  attributes: string | null;
}
interface KeyframeRow {
  track_id: number;
  frame: number;
  annotation_type: string;
  geometry: string;
  outside: number;
  occluded: number;
}

/** A stored shape as the formats take it (a bbox without a zero rotation, as annotations are exported). */
function shapeOf(type: string, geometry: Record<string, unknown>): Shape {
  if (type === 'bbox') {
    const { x, y, width, height, rotation } = geometry as { x: number; y: number; width: number; height: number; rotation?: number };
    return { type: 'bbox', geometry: rotation ? { x, y, width, height, rotation } : { x, y, width, height } };
  }
  if (type === 'mask') return { type: 'mask', geometry: { rle: (geometry as { rle: never }).rle } };
  return { type, geometry } as Shape;
}

/**
 * A project's videos and tracks as an export writes them: each video under a name unique in the export, its tracks
 * with their keyframes (for the video formats), and each frame's track shapes (keyframes and interpolated ones) as
 * annotations carrying `track_id` (the track's id), `keyframe` and, when set, `occluded`, with the track's own
 * attribute values, which is how per-frame formats (COCO, Datumaro, YOLO…) keep a track, as CVAT's exports do.
 */
export class FrameTracks {
  readonly videos: DatasetVideo[] = [];
  readonly tracks: DatasetTrack[] = [];
  private readonly names = new Map<number, string>();
  private readonly byVideo = new Map<number, { track: TrackRow; attributes: Record<string, AttributeValue>; keyframes: Keyframe[] }[]>();

  constructor(videos: VideoRow[], tracks: TrackRow[], keyframes: KeyframeRow[]) {
    const taken = new Set<string>();
    for (const v of videos) {
      const name = taken.has(v.name) ? `${v.name} (${v.id})` : v.name;
      taken.add(name);
      this.names.set(v.id, name);
      this.videos.push({ name, fps: v.fps, frameCount: v.frame_count, width: v.width, height: v.height });
    }
    const byTrack = new Map<number, Keyframe[]>();
    for (const k of keyframes) {
      const list = byTrack.get(k.track_id) ?? [];
      list.push({ frame: k.frame, annotation_type: k.annotation_type, geometry: JSON.parse(k.geometry), outside: k.outside === 1, occluded: k.occluded === 1 });
      byTrack.set(k.track_id, list);
    }
    for (const track of tracks) {
      const name = this.names.get(track.video_id);
      const list = byTrack.get(track.id) ?? [];
      if (list.length === 0) continue;
      const attributes = track.attributes ? (JSON.parse(track.attributes) as Record<string, AttributeValue>) : {};
      if (name !== undefined) this.tracks.push({
        video: name,
        id: track.id,
        className: track.class_name,
        ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
        keyframes: list.map((k) => ({ ...shapeOf(k.annotation_type, k.geometry), frame: k.frame, outside: k.outside, occluded: k.occluded }) as TrackKeyframe),
      });
      const entries = this.byVideo.get(track.video_id) ?? [];
      entries.push({ track, attributes, keyframes: list });
      this.byVideo.set(track.video_id, entries);
    }
  }

  /** The video and frame an image is, under the export's video name. */
  frameOf(videoId: number | null | undefined, frame: number | null | undefined): { name: string; frame: number } | undefined {
    const name = videoId == null ? undefined : this.names.get(videoId);
    return name === undefined || frame == null ? undefined : { name, frame };
  }

  /** The tracks' shapes on a frame of any video (named in the export or not), as annotations (see the class comment). */
  shapesOn(videoId: number, frame: number): Annotation[] {
    const out: Annotation[] = [];
    for (const { track, attributes, keyframes } of this.byVideo.get(videoId) ?? []) {
      const shape = shapeAt(keyframes, frame);
      if (!shape) continue;
      out.push({
        ...shapeOf(shape.annotation_type, shape.geometry),
        className: track.class_name,
        attributes: { ...attributes, track_id: track.id, keyframe: !shape.interpolated, ...(shape.occluded ? { occluded: true } : {}) },
      } as Annotation);
    }
    return out;
  }
}
