import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { BlobClaims } from '../../storage/blob-claims.js';
import type { ImageIngest } from '../images/image-ingest.service.js';
import type { ImagesRepository } from '../images/images.repository.js';
import { readSampleUpload } from '../samples/sample-upload.adapter.js';
import type { VideoFramesPort } from '../samples/samples.ports.js';
import { VideosRepository } from './videos.repository.js';
import { videosRoutes } from './videos.routes.js';
import { DECODE_JOB, VideosService, type DecodePayload } from './videos.service.js';

/** Most frames one video may become: a long video is sent with a larger step. */
const MAX_FRAMES = 100_000;

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface VideosServices {
  readonly ingest: ImageIngest;
  readonly blobClaims: BlobClaims;
}

/** What the module offers others: video samples sent to an image project as frames (the samples module's port). */
export interface VideosModule {
  readonly frames: VideoFramesPort;
}

/** Videos of an image project, decoded into frames by a job on the shared queue. */
export async function registerVideosModule(app: FastifyInstance, deps: ModuleDeps<VideosServices>, images: ImagesRepository): Promise<VideosModule> {
  const workDir = join(deps.config.dataDir, 'tmp');
  const service = new VideosService(new VideosRepository(deps.db), images, deps.access, deps.blobs, deps.queue, deps.services.ingest, deps.services.blobClaims,
    deps.config.ffmpeg, { maxFrames: MAX_FRAMES, maxImagePixels: deps.config.maxImagePixels, workDir });
  deps.queue.register<DecodePayload>(DECODE_JOB, (ctx) => service.decode(ctx));
  // The in-process queue's decodings die with their process (nothing of them is recorded): they start over. With
  // Redis, BullMQ's stalled-job check hands them to another worker.
  if (!deps.config.redisUrl) await service.resumeInterrupted();
  videosRoutes(app, service, (request) => readSampleUpload(request, workDir, deps.config.maxImportBytes));
  return { frames: service };
}
