import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Insertable } from 'kysely';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { ImagesTable } from '../../db/schema.js';
import { PayloadTooLargeError, ServiceUnavailableError, UnsupportedMediaError, ValidationError } from '../../http/errors.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import { batchesOf, forEachConcurrently, mapConcurrently } from '../../lib/batches.js';
import { assertFfmpeg, decodeFrames, FfmpegMissingError, probeVideo, VideoUnreadableError, type DecodedFrame, type FfmpegPaths } from '../../media/ffmpeg.js';
import { jpegFrameSize } from '../../media/jpeg-stream.js';
import { IMAGE_TYPES } from '../../imaging/image-type.js';
import { identifyMedia } from '../../media/media-probe.js';
import type { BlobClaims, BlobClaimSession } from '../../storage/blob-claims.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { readHead } from '../../storage/local-files.js';
import { videoBlobKey } from '../../storage/keys.js';
import type { CheckedImage, ImageIngest } from '../images/image-ingest.service.js';
import type { ImagesRepository } from '../images/images.repository.js';
import { hashFile, openFile, workFolder } from './video-files.adapter.js';
import { writeFileFrom } from '../../storage/local-files.js';
import type { FramesRequest, SampleVideoSource } from '../samples/samples.ports.js';
import type { SampleFramesOut, SegmentClasses, TimeSegment } from '../samples/samples.schemas.js';
import type { VideosRepository } from './videos.repository.js';
import { isSingleLabel } from '../annotations/single-label.logic.js';
import { toVideoOut, type VideoOut, type VideoRow } from './videos.schemas.js';

export const DECODE_JOB = 'video.decode';
export interface DecodePayload {
  videoId: number;
}

export interface VideoLimits {
  /** Most frames one video may become (after `step`). */
  readonly maxFrames: number;
  readonly maxImagePixels: number;
  readonly workDir: string;
}

/** An uploaded video file spooled to disk, with the form's text fields. */
export interface VideoUpload {
  readonly path: string;
  readonly originalName: string;
  readonly fields: Record<string, string>;
  cleanup(): Promise<void>;
}

/** Frames checked and written at the same time while a video becomes images. */
const FRAME_CONCURRENCY = 4;
/**
 * Frames whose files are claimed by one statement (a claim per frame was a sixth of the service's own CPU at 1080p),
 * and the most time a batch waits to fill; FFmpeg runs as many frames ahead before its pipe is paused.
 */
const FRAME_BATCH = 30;
const FRAME_BATCH_MS = 250;
/** Fewer frames a batch for larger ones (a batch and as many ahead are in memory): at most this many pixels. */
const BATCH_PIXELS = 64_000_000;
const framesPerBatch = (video: VideoRow) => Math.max(1, Math.min(FRAME_BATCH, Math.floor(BATCH_PIXELS / (video.width * video.height))));
const notFound = (id: number) => `Video ${id} not found`;

/**
 * Videos of an image project: the upload (checked by its bytes and by ffprobe, stored as a blob), a job that decodes
 * it into frames through the one image ingest path and records them in one transaction (so a decoding that stops half
 * way records no frame; its blobs are content-addressed, rewritten identically by the next attempt or removed), and
 * the delete, which takes the frames with their annotations, the tracks and the file.
 */
export class VideosService {
  constructor(
    private readonly videos: VideosRepository,
    private readonly images: ImagesRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    private readonly queue: JobQueue,
    private readonly ingest: ImageIngest,
    private readonly claims: BlobClaims,
    private readonly ffmpeg: FfmpegPaths,
    private readonly limits: VideoLimits,
  ) {}

  async upload(caller: Caller, projectId: number, read: () => Promise<VideoUpload>): Promise<VideoOut> {
    // Its frames would be images assigned to no one: an annotator kept to assigned images may not add them (403).
    await this.access.wholeProject(caller, projectId, 'images.write');
    await this.assertFfmpeg();
    const upload = await read();
    try {
      return toVideoOut((await this.create(caller, projectId, upload.path, upload.originalName, { step: stepOf(upload.fields.step) })).video);
    } finally {
      await upload.cleanup();
    }
  }

  /**
   * A video sample (of any project the caller reads) sent here as frames: its file is copied into a video of this
   * project, decoded like an upload (the clip `startS`–`endS` when given), and its time segments become
   * classifications of the frames they cover, for the labels that are classes here; the others are reported missing.
   */
  async fromSample(caller: Caller, projectId: number, source: SampleVideoSource, request: FramesRequest): Promise<SampleFramesOut> {
    await this.access.wholeProject(caller, projectId, 'images.write');
    await this.assertFfmpeg();
    if (request.startS !== undefined && request.endS !== undefined && request.startS >= request.endS) {
      throw ValidationError.at(['body', 'end_s'], `must be greater than start_s (${request.startS} s)`);
    }
    const segmentClasses = await this.segmentClasses(projectId, source.segments);
    const work = await workFolder(this.limits.workDir, `sample-frames-${randomUUID()}`);
    try {
      const path = join(work.dir, 'source');
      await writeFileFrom(path, this.blobs.stream(source.blobKey));
      const range = request.startS === undefined && request.endS === undefined ? undefined : { startS: request.startS, endS: request.endS };
      const { video, expected } = await this.create(caller, projectId, path, source.name, { step: request.step, range, sourceSampleId: source.sampleId, segments: source.segments });
      return {
        video_id: video.id, job_id: video.job_id!, project_id: projectId, sample_id: source.sampleId, step: video.step,
        range_start_s: video.range_start_s, range_end_s: video.range_end_s, expected_frames: expected, segment_classes: segmentClasses,
      };
    } finally {
      await work.remove();
    }
  }

  private async assertFfmpeg(): Promise<void> {
    await assertFfmpeg(this.ffmpeg).catch((err: unknown) => {
      throw err instanceof FfmpegMissingError ? new ServiceUnavailableError(err.message) : err;
    });
  }

  /** Which of the segments' labels are classes of the project (by exact name), in the order they first come. */
  private async segmentClasses(projectId: number, segments: readonly TimeSegment[]): Promise<SegmentClasses> {
    const names = [...new Set(segments.map((s) => s.label))];
    const known = await this.videos.classIdsByName(projectId, names);
    return { matched: names.filter((n) => known.has(n)), missing: names.filter((n) => !known.has(n)) };
  }

  /**
   * Checks a local video file (by its bytes and by ffprobe, and the clip against its duration), stores it as the
   * video's blob, records the video and starts its decoding.
   */
  private async create(
    caller: Caller,
    projectId: number,
    path: string,
    name: string,
    options: { step: number; range?: { startS?: number; endS?: number }; sourceSampleId?: number; segments?: readonly TimeSegment[] },
  ): Promise<{ video: VideoRow; expected: number }> {
    const step = options.step;
    const type = identifyMedia(await readHead(path, 64));
    if (!type || !type.kinds.includes('video') || !['mp4', 'webm', 'mov'].includes(type.container)) {
      throw new UnsupportedMediaError(`"${name}" is not an MP4, WebM or MOV video by its content`);
    }
    const facts = await probeVideo(this.ffmpeg, path).catch((err: unknown) => {
      throw err instanceof VideoUnreadableError ? ValidationError.at(['body', 'file'], `"${name}" ${err.message}`) : err;
    });
    if (facts.width * facts.height > this.limits.maxImagePixels) {
      throw new PayloadTooLargeError(`Frames of ${facts.width}×${facts.height} are over the limit of ${this.limits.maxImagePixels} pixels per image`);
    }
    const range = options.range ? clipOf(options.range, facts.durationS) : null;
    const frames = expectedFrames({ frame_count: facts.frameCount, fps: facts.fps, step, range_start_s: range?.startS ?? null, range_end_s: range?.endS ?? null });
    if (frames > this.limits.maxFrames) {
      throw new PayloadTooLargeError(`The video would become ${frames} frames, over the limit of ${this.limits.maxFrames}: send a larger step (every Nth frame)`);
    }
    const sha256 = await hashFile(path);
    const blobKey = videoBlobKey(projectId, sha256, type.ext);
    const size = await this.blobs.putStream(blobKey, openFile(path));
    const video = await this.videos.insert({
      project_id: projectId, name: name.slice(0, 255), sha256, mime_type: type.mime, size_bytes: size, blob_key: blobKey,
      fps: facts.fps, frame_count: facts.frameCount, width: facts.width, height: facts.height, duration_s: facts.durationS, start_s: facts.startS,
      step, status: 'decoding', error: null, job_id: null, created_by: caller.userId, created_at: new Date().toISOString(),
      range_start_s: range?.startS ?? null, range_end_s: range?.endS ?? null, source_sample_id: options.sourceSampleId ?? null,
      segments: options.segments && options.segments.length > 0 ? JSON.stringify(options.segments) : null,
    }).catch(async (err: unknown) => {
      await this.blobs.delete(blobKey);
      throw err;
    });
    return { video: await this.startDecoding(video), expected: frames };
  }

  private async startDecoding(video: VideoRow): Promise<VideoRow> {
    const job = await this.queue.enqueue<DecodePayload>(DECODE_JOB, { videoId: video.id }, { projectId: video.project_id, createdBy: video.created_by });
    await this.videos.setJob(video.id, job.id);
    return { ...video, job_id: job.id };
  }

  /** Decodings a stopped process left unfinished start over (nothing of them was recorded; see the class comment). */
  async resumeInterrupted(): Promise<void> {
    for (const video of await this.videos.decoding()) await this.startDecoding(video);
  }

  async list(caller: Caller, projectId: number): Promise<VideoOut[]> {
    await this.access.project(caller, projectId, 'project.read');
    return (await this.videos.listForProject(projectId)).map(toVideoOut);
  }

  async get(caller: Caller, id: number): Promise<VideoOut> {
    return toVideoOut(await this.visible(caller, id, 'project.read'));
  }

  /** Deletes the video with its frames (images, with their annotations and files), its tracks and its file. */
  async delete(caller: Caller, id: number): Promise<{ frames: number; annotations: number }> {
    const video = await this.visible(caller, id, 'images.delete');
    const { images, deletedAnnotations } = await this.images.deleteCounted(video.project_id, await this.videos.frameIds(id));
    await this.videos.delete(id);
    await Promise.all([...new Map(images.map((i) => [i.sha256, i])).values()].map((i) => this.removeUnlessUsed(video.project_id, i.sha256, [i.blob_key, i.thumbnail_key])));
    await this.blobs.delete(video.blob_key);
    return { frames: images.length, annotations: deletedAnnotations };
  }

  private async visible(caller: Caller, id: number, permission: 'project.read' | 'images.delete'): Promise<VideoRow> {
    const video = await this.videos.findWithOwner(id);
    await this.access.check(caller, video && { id: video.project_id, owner_id: video.owner_id }, permission, notFound(id));
    // Deleting takes every frame, also those an annotator kept to assigned images does not see (403).
    if (permission === 'images.delete') await this.access.wholeProject(caller, video!.project_id, permission);
    return video!;
  }

  /** The decoding job: frames to JPEG with FFmpeg, through the ingest path in batches as they come, then all recorded at once. */
  async decode(ctx: JobContext<DecodePayload>): Promise<DecodeResult> {
    const video = await this.videos.find(ctx.payload.videoId);
    if (!video || video.status !== 'decoding') return { frames: 0 };
    const claims = this.claims.session();
    const written = new Map<string, string[]>();
    const work = await workFolder(this.limits.workDir, `video-${video.id}`);
    try {
      const source = join(work.dir, 'source');
      await writeFileFrom(source, this.blobs.stream(video.blob_key));
      const expected = expectedFrames(video);
      await ctx.report({ progress: 0, message: `decoding ${expected} frames` });
      // Frames go through ingest while FFmpeg decodes the next ones (the two share the cores), in batches: one claim
      // statement for a batch's files, then its files written FRAME_CONCURRENCY at a time; the rows wait in memory for
      // the one transaction at the end.
      const range = video.range_start_s === null || video.range_end_s === null ? undefined : { fromS: video.range_start_s, toS: video.range_end_s, fps: video.fps };
      const batchSize = framesPerBatch(video);
      const frames = decodeFrames(this.ffmpeg, source, { step: video.step, startS: video.start_s, range, signal: ctx.signal, buffered: batchSize });
      const rows: Insertable<ImagesTable>[] = [];
      try {
        for await (const batch of batchesOf(frames, batchSize, FRAME_BATCH_MS)) {
          rows.push(...(await this.ingestFrames(video, batch, claims, written)));
          void ctx.progress(Math.min(1, rows.length / expected));
        }
      } finally {
        await frames.return(undefined);
      }
      rows.sort((a, b) => (a.frame ?? 0) - (b.frame ?? 0));
      const outcome = await this.record(video, rows);
      if (!outcome) await this.discard(video.project_id, written, claims);
      return outcome ?? { frames: 0 };
    } catch (err) {
      await this.discard(video.project_id, written, claims);
      const error = ctx.signal.aborted ? 'cancelled' : err instanceof Error ? err.message : String(err);
      await this.videos.finish(video.id, { status: 'failed', error });
      throw err;
    } finally {
      await claims.release();
      await work.remove();
    }
  }

  /**
   * A batch of frames through the ingest path: each checked (from its JPEG header, or decoded when that has no size),
   * the batch's files claimed at once, then written (a frame whose bytes this decoding has written already is not
   * written again: its claim holds until the end), and their rows returned. A frame checked from its header is stored
   * without its thumbnail, which is made on the first request for it (see ImagesService.thumbnail).
   */
  private async ingestFrames(video: VideoRow, batch: DecodedFrame[], claims: BlobClaimSession, written: Map<string, string[]>): Promise<Insertable<ImagesTable>[]> {
    const checked = await mapConcurrently(batch, FRAME_CONCURRENCY, async (frame) => {
      const sha256 = createHash('sha256').update(frame.bytes).digest('hex');
      const image = frameFromHeader(frame) ?? (await this.ingest.check(frame.bytes));
      return { frame, image, columns: this.ingest.columns(video.project_id, sha256, frame.bytes.length, 'probed' in image ? image.probed : image) };
    });
    const fresh = [...new Map(checked.filter((c) => !written.has(c.columns.sha256)).map((c) => [c.columns.sha256, c])).values()];
    const keys = fresh.map(({ columns }) => [columns.blob_key, columns.thumbnail_key]);
    await claims.hold(keys.flat());
    fresh.forEach((c, i) => written.set(c.columns.sha256, keys[i]));
    await forEachConcurrently(fresh, FRAME_CONCURRENCY, ({ frame, image, columns }) => 'probed' in image
      ? this.ingest.store({ blobKey: columns.blob_key, thumbnailKey: columns.thumbnail_key }, frame.bytes, image)
      : this.ingest.storeOriginal(columns.blob_key, frame.bytes));
    const createdAt = new Date().toISOString();
    return checked.map(({ frame, columns }) => {
      const name = `video${video.id}_frame${String(frame.frame).padStart(6, '0')}.jpg`;
      return { ...columns, project_id: video.project_id, split: null, filename: name, original_name: name, created_at: createdAt, video_id: video.id, frame: frame.frame, timestamp_s: frame.timestampS };
    });
  }

  /**
   * Records the frames in one transaction with the video turning `ready`; a video made from a sample also gets its time
   * segments as classifications of the frames they cover (classes looked up now, so one deleted since the request is
   * reported missing rather than failing the decoding). Undefined when the video is gone or no longer decoding.
   */
  private async record(video: VideoRow, rows: Insertable<ImagesTable>[]): Promise<DecodeResult | undefined> {
    const segments = video.segments === null ? [] : (JSON.parse(video.segments) as TimeSegment[]);
    const segmentClasses = segments.length > 0 ? await this.segmentClasses(video.project_id, segments) : undefined;
    const classIds = await this.videos.classIdsByName(video.project_id, segmentClasses?.matched ?? []);
    const covering = rows.map((row) => frameClasses(segments, classIds, row.timestamp_s ?? 0));
    // A single-label project keeps one class per frame: the first segment's (issue 30); the others are counted.
    const mode = await this.videos.labelMode(video.project_id);
    const labels = mode && isSingleLabel(mode) ? covering.map((ids) => ids.slice(0, 1)) : covering;
    const leftOut = covering.reduce((n, ids, i) => n + ids.length - labels[i].length, 0);
    rows.forEach((row, i) => (row.annotation_count = labels[i].length));
    const classified = labels.filter((l) => l.length > 0).length;
    const recorded = await this.images.transaction(video.project_id, async (tx) => {
      if (!(await this.videos.finish(video.id, { status: 'ready' }, tx))) return false;
      const inserted = await this.images.insertManyCounted(video.project_id, rows, tx);
      const now = new Date().toISOString();
      await this.videos.insertFrameClassifications(video.project_id, inserted.flatMap((image, i) => labels[i].map((classId) => ({
        image_id: image.id, project_id: video.project_id, class_id: classId, annotation_type: 'classification', geometry: '{}', confidence: null,
        source: `sample:${video.source_sample_id}`, created_at: now, updated_at: now, attributes: null, group_id: null,
      }))), { annotatedImages: classified, userId: video.created_by, now }, tx);
      return true;
    });
    if (!recorded) return undefined;
    return { frames: rows.length, ...(segmentClasses ? { classified, segment_classes: segmentClasses } : {}), ...(leftOut > 0 ? { classes_left_out: leftOut } : {}) };
  }

  private async discard(projectId: number, written: Map<string, string[]>, claims: BlobClaimSession): Promise<void> {
    await Promise.all([...written].map(([sha256, keys]) => this.removeUnlessUsed(projectId, sha256, keys, claims)));
  }

  /** Content-addressed image files go only when no row of the project refers to them and no writer holds them. */
  private async removeUnlessUsed(projectId: number, sha256: string, keys: string[], claims?: BlobClaimSession): Promise<void> {
    await this.claims.removeUnlessUsed(keys, () => this.images.shaInUse(projectId, sha256), (key) => this.blobs.delete(key), claims);
  }
}

/**
 * A frame checked from its JPEG header alone (the video's size was checked against the pixel limit at upload), so
 * the JPEG FFmpeg just encoded is not decoded again. Null when the header holds no size (then the frame takes the
 * ingest path's decode, thumbnail included).
 */
function frameFromHeader(frame: DecodedFrame): { type: CheckedImage['type']; width: number; height: number } | null {
  const size = jpegFrameSize(frame.bytes);
  return size && { type: IMAGE_TYPES.jpeg, ...size };
}

export interface DecodeResult {
  frames: number;
  /** Frames that got a classification from the sample's time segments (videos made from a sample). */
  classified?: number;
  segment_classes?: SegmentClasses;
  /** Classes of overlapping segments a single-label project did not give a frame (it keeps the first segment's). */
  classes_left_out?: number;
}

/** About how many frames a decoding makes: every `step`-th frame of the video, or of its clip (frames at n / fps). */
export function expectedFrames(video: Pick<VideoRow, 'frame_count' | 'fps' | 'step' | 'range_start_s' | 'range_end_s'>): number {
  if (video.range_start_s === null || video.range_end_s === null || !(video.fps > 0)) return Math.ceil(video.frame_count / video.step);
  const first = Math.ceil(video.range_start_s * video.fps - 1e-6);
  const end = Math.min(video.frame_count, Math.ceil(video.range_end_s * video.fps - 1e-6));
  return Math.max(0, Math.ceil((end - first) / video.step));
}

/**
 * The clip asked for, checked against the video's duration: 0 ≤ start < end ≤ duration (a missing end is the
 * duration; a millisecond of slack, as containers round their duration).
 */
function clipOf(range: { startS?: number; endS?: number }, durationS: number): { startS: number; endS: number } {
  const startS = range.startS ?? 0;
  const endS = range.endS ?? durationS;
  if (!(startS >= 0) || startS >= durationS) throw ValidationError.at(['body', 'start_s'], `must be from 0 to less than the video's duration (${durationS} s)`);
  if (endS > durationS + 0.001) throw ValidationError.at(['body', 'end_s'], `must be at most the video's duration (${durationS} s)`);
  if (endS <= startS) throw ValidationError.at(['body', 'end_s'], `must be greater than start_s (${startS} s)`);
  return { startS, endS: Math.min(endS, durationS) };
}

/** The classes of the segments that cover a frame's time (start included, end excluded), each once. */
function frameClasses(segments: readonly TimeSegment[], classIds: Map<string, number>, timeS: number): number[] {
  const ids = new Set<number>();
  for (const s of segments) {
    const id = classIds.get(s.label);
    if (id !== undefined && s.start_s <= timeS + 1e-6 && timeS < s.end_s - 1e-6) ids.add(id);
  }
  return [...ids];
}

function stepOf(text: string | undefined): number {
  if (text === undefined || text === '') return 1;
  const step = Number(text);
  if (!Number.isInteger(step) || step < 1 || step > 10_000) throw ValidationError.at(['body', 'step'], 'must be an integer from 1 to 10000 (decode every Nth frame)');
  return step;
}
