import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Insertable } from 'kysely';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { ImagesTable } from '../../db/schema.js';
import { PayloadTooLargeError, ServiceUnavailableError, UnsupportedMediaError, ValidationError } from '../../http/errors.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import { drainConcurrently } from '../../lib/batches.js';
import { assertFfmpeg, decodeFrames, FfmpegMissingError, probeVideo, VideoUnreadableError, type FfmpegPaths } from '../../media/ffmpeg.js';
import { identifyMedia } from '../../media/media-probe.js';
import type { BlobClaims } from '../../storage/blob-claims.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { readHead } from '../../storage/local-files.js';
import { videoBlobKey } from '../../storage/keys.js';
import type { ImageIngest } from '../images/image-ingest.service.js';
import type { ImagesRepository } from '../images/images.repository.js';
import { hashFile, openFile, workFolder } from './video-files.adapter.js';
import { writeFileFrom } from '../../storage/local-files.js';
import type { VideosRepository } from './videos.repository.js';
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
    await assertFfmpeg(this.ffmpeg).catch((err: unknown) => {
      throw err instanceof FfmpegMissingError ? new ServiceUnavailableError(err.message) : err;
    });
    const upload = await read();
    try {
      const step = stepOf(upload.fields.step);
      const type = identifyMedia(await readHead(upload.path, 64));
      if (!type || !type.kinds.includes('video') || !['mp4', 'webm', 'mov'].includes(type.container)) {
        throw new UnsupportedMediaError(`"${upload.originalName}" is not an MP4, WebM or MOV video by its content`);
      }
      const facts = await probeVideo(this.ffmpeg, upload.path).catch((err: unknown) => {
        throw err instanceof VideoUnreadableError ? ValidationError.at(['body', 'file'], `"${upload.originalName}" ${err.message}`) : err;
      });
      if (facts.width * facts.height > this.limits.maxImagePixels) {
        throw new PayloadTooLargeError(`Frames of ${facts.width}×${facts.height} are over the limit of ${this.limits.maxImagePixels} pixels per image`);
      }
      const frames = Math.ceil(facts.frameCount / step);
      if (frames > this.limits.maxFrames) {
        throw new PayloadTooLargeError(`The video would become ${frames} frames, over the limit of ${this.limits.maxFrames}: send a larger step (every Nth frame)`);
      }
      const sha256 = await hashFile(upload.path);
      const blobKey = videoBlobKey(projectId, sha256, type.ext);
      const size = await this.blobs.putStream(blobKey, openFile(upload.path));
      const video = await this.videos.insert({
        project_id: projectId, name: upload.originalName.slice(0, 255), sha256, mime_type: type.mime, size_bytes: size, blob_key: blobKey,
        fps: facts.fps, frame_count: facts.frameCount, width: facts.width, height: facts.height, duration_s: facts.durationS, start_s: facts.startS,
        step, status: 'decoding', error: null, job_id: null, created_by: caller.userId, created_at: new Date().toISOString(),
      }).catch(async (err: unknown) => {
        await this.blobs.delete(blobKey);
        throw err;
      });
      return toVideoOut(await this.startDecoding(video));
    } finally {
      await upload.cleanup();
    }
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

  /** The decoding job: frames to JPEG with FFmpeg, each through the ingest path as it comes, then all recorded at once. */
  async decode(ctx: JobContext<DecodePayload>): Promise<{ frames: number }> {
    const video = await this.videos.find(ctx.payload.videoId);
    if (!video || video.status !== 'decoding') return { frames: 0 };
    const claims = this.claims.session();
    const written = new Map<string, string[]>();
    const work = await workFolder(this.limits.workDir, `video-${video.id}`);
    try {
      const source = join(work.dir, 'source');
      await writeFileFrom(source, this.blobs.stream(video.blob_key));
      const expected = Math.ceil(video.frame_count / video.step);
      await ctx.report({ progress: 0, message: `decoding ${expected} frames` });
      // Each frame goes through ingest while FFmpeg decodes the next ones (the two share the cores), at most
      // FRAME_CONCURRENCY at a time; the rows wait in memory for the one transaction at the end.
      const frames = decodeFrames(this.ffmpeg, source, { step: video.step, startS: video.start_s, signal: ctx.signal, buffered: 2 * FRAME_CONCURRENCY });
      const rows: Insertable<ImagesTable>[] = [];
      try {
        await drainConcurrently(FRAME_CONCURRENCY, async () => (await frames.next()).value ?? undefined, async (frame) => {
          const sha256 = createHash('sha256').update(frame.bytes).digest('hex');
          const checked = await this.ingest.check(frame.bytes);
          const columns = this.ingest.columns(video.project_id, sha256, frame.bytes.length, checked.probed);
          const keys = [columns.blob_key, columns.thumbnail_key];
          claims.hold(keys);
          written.set(sha256, keys);
          await this.ingest.store({ blobKey: columns.blob_key, thumbnailKey: columns.thumbnail_key }, frame.bytes, checked);
          const name = `video${video.id}_frame${String(frame.frame).padStart(6, '0')}.jpg`;
          rows.push({ ...columns, project_id: video.project_id, split: null, filename: name, original_name: name, created_at: new Date().toISOString(), video_id: video.id, frame: frame.frame, timestamp_s: frame.timestampS });
          void ctx.progress(Math.min(1, rows.length / expected));
        });
      } finally {
        await frames.return(undefined);
      }
      rows.sort((a, b) => (a.frame ?? 0) - (b.frame ?? 0));
      const recorded = await this.images.transaction(video.project_id, async (tx) => {
        if (!(await this.videos.finish(video.id, { status: 'ready' }, tx))) return false;
        await this.images.insertManyCounted(video.project_id, rows, tx);
        return true;
      });
      if (!recorded) await this.discard(video.project_id, written, claims);
      return { frames: recorded ? rows.length : 0 };
    } catch (err) {
      await this.discard(video.project_id, written, claims);
      const error = ctx.signal.aborted ? 'cancelled' : err instanceof Error ? err.message : String(err);
      await this.videos.finish(video.id, { status: 'failed', error });
      throw err;
    } finally {
      claims.release();
      await work.remove();
    }
  }

  private async discard(projectId: number, written: Map<string, string[]>, claims: ReturnType<BlobClaims['session']>): Promise<void> {
    await Promise.all([...written].map(([sha256, keys]) => this.removeUnlessUsed(projectId, sha256, keys, claims)));
  }

  /** Content-addressed image files go only when no row of the project refers to them and no writer holds them. */
  private async removeUnlessUsed(projectId: number, sha256: string, keys: string[], claims?: ReturnType<BlobClaims['session']>): Promise<void> {
    if (await this.images.shaInUse(projectId, sha256)) return;
    await Promise.all(keys.filter((key) => !this.claims.anyHeld(key, claims)).map((key) => this.blobs.delete(key)));
  }
}

function stepOf(text: string | undefined): number {
  if (text === undefined || text === '') return 1;
  const step = Number(text);
  if (!Number.isInteger(step) || step < 1 || step > 10_000) throw ValidationError.at(['body', 'step'], 'must be an integer from 1 to 10000 (decode every Nth frame)');
  return step;
}
