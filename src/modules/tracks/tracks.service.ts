import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ValidationError } from '../../http/errors.js';
import { ClassSpecError, parseAttributes, skeletonSize, type AttributeValue } from '../../imaging/class-specs.js';
import { GeometryError, parseGeometry, type AnnotationType, type KeypointsGeometry } from '../../imaging/geometry.js';
import { shapeAt, type FrameShape, type Keyframe } from './track-interpolation.logic.js';
import type { ClassSpecs, KeyframeRow, TrackRow, TracksRepository, VideoTarget } from './tracks.repository.js';
import type { KeyframeIn, KeyframeOut, TrackCreate, TrackOut, TrackUpdate } from './tracks.schemas.js';

/** A track's shape on one frame, as a frame's annotation list shows it. */
export interface TrackShape extends FrameShape {
  track_id: number;
  class_id: number;
  attributes: Record<string, AttributeValue>;
  created_at: string;
  updated_at: string;
}

const notFound = (kind: 'Video' | 'Track', id: number) => `${kind} ${id} not found`;

/**
 * Tracks of a video: keyframes checked like annotations (geometry on the video's frame size, keypoints against the
 * class's skeleton, attributes against its specs), stored one per frame; shapes between them are computed on read.
 */
export class TracksService {
  constructor(
    private readonly tracks: TracksRepository,
    private readonly access: ProjectAccess,
  ) {}

  async list(caller: Caller, videoId: number): Promise<TrackOut[]> {
    await this.video(caller, videoId, 'project.read');
    return this.withKeyframes(await this.tracks.listForVideo(videoId));
  }

  async create(caller: Caller, videoId: number, input: TrackCreate): Promise<TrackOut> {
    const video = await this.video(caller, videoId, 'annotations.write');
    const cls = await this.classOf(video.project_id, input.class_id);
    const keyframes = validKeyframes(input.keyframes, video, cls, ['body', 'keyframes']);
    const now = new Date().toISOString();
    const row = await this.tracks.insert(
      { project_id: video.project_id, video_id: videoId, class_id: cls.id, attributes: validAttributes(input.attributes, cls), created_at: now, updated_at: now },
      keyframes.map(toColumns),
    );
    return (await this.withKeyframes([row]))[0];
  }

  async get(caller: Caller, id: number): Promise<TrackOut> {
    const { track } = await this.track(caller, id, 'project.read');
    return (await this.withKeyframes([track]))[0];
  }

  /** Class, attributes, keyframes upserted by frame and keyframes removed; a track keeps at least one keyframe. */
  async update(caller: Caller, id: number, input: TrackUpdate): Promise<TrackOut> {
    const { track, video } = await this.track(caller, id, 'annotations.write');
    const cls = await this.classOf(video.project_id, input.class_id ?? track.class_id);
    const upserts = validKeyframes(input.keyframes ?? [], video, cls, ['body', 'keyframes']);
    const deletes = input.delete_frames ?? [];
    const existing = (await this.tracks.keyframes([id])).map(toKeyframe);
    const result = new Map(existing.map((k) => [k.frame, k]));
    for (const frame of deletes) result.delete(frame);
    for (const k of upserts) result.set(k.frame, k);
    if (result.size === 0) throw ValidationError.at(['body', 'delete_frames'], 'a track keeps at least one keyframe: delete the track instead');
    // A new class checks the keyframes it keeps, and the attributes, against its own skeleton and specs.
    if (input.class_id !== undefined) validKeyframes([...result.values()].map(toKeyframeOut), video, cls, ['body', 'class_id']);
    const attributes = input.attributes !== undefined ? validAttributes(input.attributes, cls) : input.class_id !== undefined ? validAttributes(attributesOf(track), cls, ['body', 'class_id']) : track.attributes;
    await this.tracks.update(id, { class_id: cls.id, attributes }, upserts.map(toColumns), deletes);
    return this.get(caller, id);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    await this.track(caller, id, 'annotations.write');
    await this.tracks.delete(id);
  }

  /**
   * The shape of each track of the image's video on the image's frame (none for an image that is no frame). The
   * caller has already been allowed to read the image.
   */
  async frameShapes(imageId: number): Promise<TrackShape[]> {
    const frame = await this.tracks.frameOf(imageId);
    if (!frame) return [];
    const tracks = await this.tracks.listForVideo(frame.video_id);
    const byTrack = groupKeyframes(await this.tracks.keyframes(tracks.map((t) => t.id)));
    return tracks.flatMap((track) => {
      const shape = shapeAt(byTrack.get(track.id) ?? [], frame.frame);
      return shape ? [{ ...shape, track_id: track.id, class_id: track.class_id, attributes: attributesOf(track), created_at: track.created_at, updated_at: track.updated_at }] : [];
    });
  }

  private async withKeyframes(tracks: TrackRow[]): Promise<TrackOut[]> {
    const byTrack = groupKeyframes(await this.tracks.keyframes(tracks.map((t) => t.id)));
    return tracks.map((t) => ({
      id: t.id,
      project_id: t.project_id,
      video_id: t.video_id,
      class_id: t.class_id,
      attributes: attributesOf(t),
      keyframes: (byTrack.get(t.id) ?? []).map(toKeyframeOut),
      created_at: t.created_at,
      updated_at: t.updated_at,
    }));
  }

  private async video(caller: Caller, videoId: number, permission: 'project.read' | 'annotations.write'): Promise<VideoTarget> {
    const video = await this.tracks.findVideo(videoId);
    await this.wholeVideo(caller, video, permission, notFound('Video', videoId));
    return video!;
  }

  private async track(caller: Caller, id: number, permission: 'project.read' | 'annotations.write'): Promise<{ track: TrackRow; video: VideoTarget }> {
    const track = await this.tracks.find(id);
    const video = track && (await this.tracks.findVideo(track.video_id));
    await this.wholeVideo(caller, video, permission, notFound('Track', id));
    return { track: track!, video: video! };
  }

  /** A track spans frames: an annotator kept to assigned images may not read or write one (403), like a version. */
  private async wholeVideo(caller: Caller, video: VideoTarget | undefined, permission: 'project.read' | 'annotations.write', missing: string): Promise<void> {
    await this.access.check(caller, video && { id: video.project_id, owner_id: video.owner_id }, permission, missing);
    await this.access.wholeProject(caller, video!.project_id, permission);
  }

  private async classOf(projectId: number, classId: number): Promise<ClassSpecs> {
    const cls = await this.tracks.findClass(projectId, classId);
    if (!cls) throw ValidationError.at(['body', 'class_id'], `Class ${classId} is not a class of this project`);
    return cls;
  }
}

const attributesOf = (track: TrackRow): Record<string, AttributeValue> => (track.attributes === null ? {} : JSON.parse(track.attributes));

function groupKeyframes(rows: KeyframeRow[]): Map<number, Keyframe[]> {
  const byTrack = new Map<number, Keyframe[]>();
  for (const row of rows) {
    const list = byTrack.get(row.track_id) ?? [];
    list.push(toKeyframe(row));
    byTrack.set(row.track_id, list);
  }
  return byTrack;
}

const toKeyframe = (row: KeyframeRow): Keyframe => ({
  frame: row.frame, annotation_type: row.annotation_type, geometry: JSON.parse(row.geometry), outside: row.outside === 1, occluded: row.occluded === 1,
});

const toKeyframeOut = (k: Keyframe): KeyframeOut => ({ ...k, annotation_type: k.annotation_type as AnnotationType });

const toColumns = (k: Keyframe) => ({
  frame: k.frame, annotation_type: k.annotation_type, geometry: JSON.stringify(k.geometry), outside: k.outside ? 1 : 0, occluded: k.occluded ? 1 : 0,
});

/**
 * Keyframes checked and stored as an annotation's shape would be, sorted by frame; a frame given twice, a frame past
 * the video's end or a keypoint count other than the class's skeleton is 422 at `path`.
 */
function validKeyframes(input: readonly KeyframeIn[], video: VideoTarget, cls: ClassSpecs, path: (string | number)[]): Keyframe[] {
  const expectedPoints = skeletonSize(cls.skeleton);
  const seen = new Set<number>();
  const keyframes = input.map((k, i): Keyframe => {
    const at = path.length === 2 && path[1] === 'keyframes' ? [...path, i] : path;
    if (seen.has(k.frame)) throw ValidationError.at([...at, 'frame'], `frame ${k.frame} has two keyframes`);
    seen.add(k.frame);
    if (k.frame >= video.frame_count) throw ValidationError.at([...at, 'frame'], `the video has ${video.frame_count} frames (0 to ${video.frame_count - 1})`);
    if (k.annotation_type === 'classification') throw ValidationError.at([...at, 'annotation_type'], 'a track is made of shapes: classification has none');
    let geometry: Record<string, unknown>;
    try {
      geometry = parseGeometry(k.annotation_type, k.geometry as Record<string, unknown>, video) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof GeometryError) throw ValidationError.at([...at, 'geometry', ...err.path], err.message);
      throw err;
    }
    if (k.annotation_type === 'keypoints' && expectedPoints !== null && (geometry as unknown as KeypointsGeometry).points.length !== expectedPoints) {
      throw ValidationError.at([...at, 'geometry', 'points'], `the class's skeleton has ${expectedPoints} points; ${(geometry as unknown as KeypointsGeometry).points.length} were sent`);
    }
    return { frame: k.frame, annotation_type: k.annotation_type, geometry, outside: k.outside ?? false, occluded: k.occluded ?? false };
  });
  return keyframes.sort((a, b) => a.frame - b.frame);
}

function validAttributes(input: Record<string, unknown> | undefined, cls: ClassSpecs, path: (string | number)[] = ['body', 'attributes']): string | null {
  if (input === undefined || Object.keys(input).length === 0) return null;
  try {
    return JSON.stringify(parseAttributes(input, cls.attributes === null ? [] : JSON.parse(cls.attributes)));
  } catch (err) {
    if (err instanceof ClassSpecError) throw ValidationError.at([...path, ...err.path], err.message);
    throw err;
  }
}

