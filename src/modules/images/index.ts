import { availableParallelism } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import type { BlobClaims } from '../../storage/blob-claims.js';
import type { ImageFeatureRecorder } from '../quality/image-features.service.js';
import type { ImageIngest } from './image-ingest.service.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import { ImagesRepository } from './images.repository.js';
import { imagesRoutes } from './images.routes.js';
import { ImagesService } from './images.service.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface ImagesServices {
  readonly projectsRepository: ProjectsRepository;
  readonly locks: LockGuard;
  readonly scope: AssignmentScope;
  readonly blobClaims: BlobClaims;
  readonly ingest: ImageIngest;
  readonly features: ImageFeatureRecorder;
}

/**
 * Returns its repository (the frames of a video are images: the videos module records and deletes them with it) and its
 * service (a project storage's sync ingests its objects through the same path as uploads).
 */
export function registerImagesModule(app: FastifyInstance, deps: ModuleDeps<ImagesServices>): { repository: ImagesRepository; service: ImagesService } {
  const repository = new ImagesRepository(deps.db, deps.services.projectsRepository);
  const service = new ImagesService(repository, deps.access, deps.blobs, {
    maxUploadBytes: deps.config.maxUploadBytes,
    // Enough files in flight to keep every core busy while others wait on disk writes (sharp and fs share libuv's
    // pool of 4 threads), and few enough to bound memory (each holds its whole file).
    uploadConcurrency: Math.min(8, Math.max(4, availableParallelism())),
  }, {
    locks: deps.services.locks,
    scope: deps.services.scope,
    claims: deps.services.blobClaims,
  }, deps.services.ingest, deps.config.ingestFeatures ? deps.services.features : undefined);
  imagesRoutes(app, service, deps.config.maxUploadBytes);
  return { repository, service };
}
