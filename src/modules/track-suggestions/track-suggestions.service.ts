import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import { clampBox, geometryBox } from '../../imaging/geometry.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import type { AutoAnnotateService } from '../auto-annotate/auto-annotate.service.js';
import { assertRunnable, type ModelRuntime } from '../models/model-runtime.adapter.js';
import type { ModelsRepository } from '../models/models.repository.js';
import type { ModelRow } from '../models/models.schemas.js';
import { keyframeIndices, type BoxAt } from '../tracks/track-keyframes.logic.js';
import { ByteTracker, DEFAULT_TRACKER_OPTIONS, type Detection } from '../tracks/tracker.logic.js';
import type { TrackOut } from '../tracks/tracks.schemas.js';
import type { TrackSuggestionRow, TrackSuggestionsRepository, VideoToTrack } from './track-suggestions.repository.js';
import type { AcceptRequest, TrackRunOut, TrackRunRequest, TrackSuggestionOut } from './track-suggestions.schemas.js';
import { classKey } from '../classes/class-key.logic.js';

export const TRACK_JOB = 'track-suggestions.track';

export interface TrackJobPayload {
  videoId: number;
  userId: number;
  modelId: number;
  firstFrame: number;
  lastFrame: number;
  highScore: number;
  lowScore: number;
  maxLostFrames: number;
}

/** The model tasks whose output has a box to track (segment: the polygon's bounds; obb: the rotated box's; pose: the instance box). */
const TRACKABLE_TASKS = ['detect', 'segment', 'obb', 'pose'];
/** NMS overlap, as auto-annotate's default. */
const NMS_IOU = 0.45;

type Box = { x: number; y: number; width: number; height: number };
/** A stored box: `[frame, x, y, width, height, score]`. */
type StoredBox = [number, number, number, number, number, number];

const notFound = (kind: 'Video' | 'Track suggestion', id: number) => `${kind} ${id} not found`;
const round = (v: number) => Math.round(v * 100) / 100;

/**
 * Automatic tracking: a detector runs over a video's frames in a job, the tracker links its boxes into tracks, and
 * each track waits as a suggestion until someone accepts it (a track with keyframes) or rejects it. Tracks span
 * frames, so as for tracks themselves an annotator kept to assigned images may not run, read or decide them (403).
 */
export class TrackSuggestionsService {
  constructor(
    private readonly repository: TrackSuggestionsRepository,
    private readonly models: ModelsRepository,
    private readonly runtime: ModelRuntime,
    private readonly detector: Pick<AutoAnnotateService, 'detectForPipeline'>,
    private readonly access: ProjectAccess,
    private readonly queue: JobQueue,
  ) {}

  async run(caller: Caller, videoId: number, input: TrackRunRequest): Promise<TrackRunOut> {
    const video = await this.video(caller, videoId, 'annotations.write');
    if (video.status !== 'ready') throw new ConflictError(`Video ${videoId} is ${video.status}: its frames can be tracked once it is ready`);
    const firstFrame = input.first_frame ?? 0;
    const lastFrame = input.last_frame ?? video.frame_count - 1;
    if (lastFrame >= video.frame_count) throw ValidationError.at(['body', 'last_frame'], `the video has ${video.frame_count} frames (0 to ${video.frame_count - 1})`);
    if (firstFrame > lastFrame) throw ValidationError.at(['body', 'first_frame'], `must not be after last_frame (${lastFrame})`);
    const highScore = input.high_score ?? DEFAULT_TRACKER_OPTIONS.highScore;
    const lowScore = input.low_score ?? DEFAULT_TRACKER_OPTIONS.lowScore;
    if (lowScore > highScore) throw ValidationError.at(['body', 'low_score'], `must not be above high_score (${highScore})`);
    const model = await this.resolveModel(caller, video.project_id, input.model);
    if (!TRACKABLE_TASKS.includes(model.task)) {
      throw ValidationError.at(['body', 'model'], `Model '${model.name}' is a ${model.task} model; tracking needs a detect, segment, obb or pose model`);
    }
    assertRunnable(model);
    // Loaded (and so checked) in the pool the job will use, before anything is queued.
    await this.runtime.detector(model, true);
    const frameCount = await this.repository.countFrames(videoId, firstFrame, lastFrame);
    const payload: TrackJobPayload = {
      videoId, userId: caller.userId, modelId: model.id, firstFrame, lastFrame, highScore, lowScore, maxLostFrames: input.max_lost_frames ?? DEFAULT_TRACKER_OPTIONS.maxLostFrames,
    };
    const job = await this.queue.enqueue(TRACK_JOB, payload, { projectId: video.project_id, createdBy: caller.userId });
    return { job_id: job.id, status: job.status, url: `/api/jobs/${job.id}`, model_id: model.id, first_frame: firstFrame, last_frame: lastFrame, frame_count: frameCount };
  }

  /**
   * The job: frame by frame in order, the detector (on the batch pool, so it yields to interactive requests) and
   * the tracker; at the end the tracks replace, in one transaction, this model's open suggestions that overlap the
   * range. Detections of classes the project lacks are skipped.
   */
  async runJob(ctx: JobContext<TrackJobPayload>): Promise<object> {
    const p = ctx.payload;
    const video = await this.repository.findVideo(p.videoId);
    if (!video) throw new Error(`Video ${p.videoId} was deleted before the job ran`);
    const model = await this.models.find(p.modelId);
    if (!model) throw new Error(`Model ${p.modelId} was deleted before the job ran`);
    const classes = new Map((await this.repository.classes(video.project_id)).map((c) => [classKey(c.name), c.id]));
    const frames = await this.repository.frames(p.videoId, p.firstFrame, p.lastFrame);
    const tracker = new ByteTracker({ highScore: p.highScore, lowScore: p.lowScore, newTrackScore: Math.min(1, p.highScore + 0.1), maxLostFrames: p.maxLostFrames });
    let detections = 0;
    let skipped = 0;
    for (const [i, frame] of frames.entries()) {
      if (ctx.signal.aborted) throw new Error('cancelled');
      const planned = await this.detector.detectForPipeline(model, frame, { confidence: p.lowScore, iou: NMS_IOU });
      const found: Detection[] = [];
      for (const d of planned) {
        const classId = classes.get(classKey(d.className));
        const box = geometryBox(d.annotation_type, d.geometry);
        if (classId === undefined || !box) skipped++;
        else found.push({ ...box, score: d.confidence, classKey: classId });
      }
      detections += found.length;
      tracker.step(frame.frame, found);
      await ctx.progress((i + 1) / frames.length);
    }
    const source = `model:${model.id}`;
    const now = new Date().toISOString();
    const rows = tracker.tracks().flatMap((t) => {
      const boxes = t.observations.flatMap((o): StoredBox[] => {
        const box = clampBox(o.box, video);
        if (!box) return [];
        // Rounded, and still on the frame after rounding.
        const [x, y] = [round(box.x), round(box.y)];
        const [width, height] = [Math.min(round(box.width), video.width - x), Math.min(round(box.height), video.height - y)];
        return width > 0 && height > 0 ? [[o.frame, x, y, width, height, round(o.score)]] : [];
      });
      if (boxes.length === 0) return [];
      const score = boxes.reduce((sum, b) => sum + b[5], 0) / boxes.length;
      return [{
        project_id: video.project_id, video_id: video.id, class_id: t.classKey as number, source, score: round(score),
        first_frame: boxes[0][0], last_frame: boxes[boxes.length - 1][0], boxes: JSON.stringify(boxes), created_at: now,
      }];
    });
    const replaced = await this.repository.replace(video.id, source, p.firstFrame, p.lastFrame, rows);
    return { frames: frames.length, detections, skipped, tracks: rows.length, replaced };
  }

  async list(caller: Caller, videoId: number): Promise<TrackSuggestionOut[]> {
    await this.video(caller, videoId, 'project.read');
    return (await this.repository.listForVideo(videoId)).map(toOut);
  }

  /**
   * The suggestion becomes a track: keyframes where its motion departs from linear interpolation (or on every frame),
   * then an `outside` keyframe on the next decoded frame after its last box, when the video goes on.
   */
  async accept(caller: Caller, id: number, input: AcceptRequest): Promise<TrackOut> {
    const { suggestion, video } = await this.suggestion(caller, id);
    const boxes: BoxAt[] = (JSON.parse(suggestion.boxes) as StoredBox[]).map(([frame, x, y, width, height]) => ({ frame, box: { x, y, width, height } }));
    const kept = input.every_frame ? boxes : keyframeIndices(boxes).map((i) => boxes[i]);
    const keyframes = kept.map((b) => ({ frame: b.frame, annotation_type: 'bbox', geometry: b.box as Box, outside: false, occluded: false }));
    const end = suggestion.last_frame + video.step;
    if (end < video.frame_count) keyframes.push({ ...keyframes[keyframes.length - 1], frame: end, outside: true });
    const now = new Date().toISOString();
    const row = await this.repository.accept(
      id,
      { project_id: suggestion.project_id, video_id: suggestion.video_id, class_id: suggestion.class_id, attributes: null, created_at: now, updated_at: now },
      keyframes.map((k) => ({ frame: k.frame, annotation_type: k.annotation_type, geometry: JSON.stringify(k.geometry), outside: k.outside ? 1 : 0, occluded: 0 })),
    );
    if (!row) throw new NotFoundError(notFound('Track suggestion', id));
    return {
      id: row.id, project_id: row.project_id, video_id: row.video_id, class_id: row.class_id, attributes: {},
      keyframes: keyframes.map((k) => ({ ...k, annotation_type: 'bbox' as const })), created_at: row.created_at, updated_at: row.updated_at,
    };
  }

  async reject(caller: Caller, id: number): Promise<void> {
    await this.suggestion(caller, id);
    if (!(await this.repository.delete(id))) throw new NotFoundError(notFound('Track suggestion', id));
  }

  private async suggestion(caller: Caller, id: number): Promise<{ suggestion: TrackSuggestionRow; video: VideoToTrack }> {
    const suggestion = await this.repository.find(id);
    const video = suggestion && (await this.repository.findVideo(suggestion.video_id));
    await this.wholeVideo(caller, video, 'annotations.write', notFound('Track suggestion', id));
    return { suggestion: suggestion!, video: video! };
  }

  private async video(caller: Caller, videoId: number, permission: 'project.read' | 'annotations.write'): Promise<VideoToTrack> {
    const video = await this.repository.findVideo(videoId);
    await this.wholeVideo(caller, video, permission, notFound('Video', videoId));
    return video!;
  }

  private async wholeVideo(caller: Caller, video: VideoToTrack | undefined, permission: 'project.read' | 'annotations.write', missing: string): Promise<void> {
    await this.access.check(caller, video && { id: video.project_id, owner_id: video.owner_id }, permission, missing);
    await this.access.wholeProject(caller, video!.project_id, permission);
  }

  /** As auto-annotate: by id in any project the caller can read (else 404, as its project), or by name in this one. */
  private async resolveModel(caller: Caller, projectId: number, ref: number | string): Promise<ModelRow> {
    if (typeof ref === 'number') {
      const model = await this.models.find(ref);
      await this.access.check(caller, model && { id: model.project_id, owner_id: model.owner_id }, 'project.read', `Model ${ref} not found`).catch((err) => {
        throw err instanceof ForbiddenError ? new NotFoundError(`Model ${ref} not found`) : err;
      });
      return model!;
    }
    const model = await this.models.findByName(projectId, ref.trim());
    if (!model) throw ValidationError.at(['body', 'model'], `No model named '${ref}' in project ${projectId}`);
    return model;
  }
}

function toOut(row: TrackSuggestionRow): TrackSuggestionOut {
  return {
    id: row.id,
    project_id: row.project_id,
    video_id: row.video_id,
    class_id: row.class_id,
    source: row.source,
    score: row.score,
    first_frame: row.first_frame,
    last_frame: row.last_frame,
    boxes: (JSON.parse(row.boxes) as StoredBox[]).map(([frame, x, y, width, height, score]) => ({ frame, x, y, width, height, score })),
    created_at: row.created_at,
  };
}
