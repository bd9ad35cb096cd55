import { availableParallelism } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { ImagesRepository } from './images.repository.js';
import { imagesRoutes } from './images.routes.js';
import { ImagesService } from './images.service.js';

/**
 * Returns its repository (the frames of a video are images: the videos module records and deletes them with it) and its
 * service (a project storage's sync ingests its objects through the same path as uploads).
 */
export function registerImagesModule(app: FastifyInstance, deps: ModuleDeps): { repository: ImagesRepository; service: ImagesService } {
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
