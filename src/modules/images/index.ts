import { availableParallelism } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { AssignmentScope } from '../assignments/assignment-scope.js';
import { AssignmentsRepository } from '../assignments/assignments.repository.js';
import { LockGuard } from '../locks/lock-guard.js';
import { LocksRepository } from '../locks/locks.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { ProjectsRepository } from '../projects/projects.repository.js';
import { ImageFeaturesRepository } from '../quality/image-features.repository.js';
import { ImageFeatureRecorder } from '../quality/image-features.service.js';
import { ImagesRepository } from './images.repository.js';
import { imagesRoutes } from './images.routes.js';
import { ImagesService } from './images.service.js';

export function registerImagesModule(app: FastifyInstance, deps: ModuleDeps): void {
  const repository = new ImagesRepository(deps.db, new ProjectsRepository(deps.db));
  const service = new ImagesService(repository, deps.access, deps.blobs, {
    maxUploadBytes: deps.config.maxUploadBytes,
    maxImagePixels: deps.config.maxImagePixels,
    // Enough files in flight to keep every core busy while others wait on disk writes (sharp and fs share libuv's
    // pool of 4 threads), and few enough to bound memory (each holds its whole file).
    uploadConcurrency: Math.min(8, Math.max(4, availableParallelism())),
  }, {
    locks: new LockGuard(new LocksRepository(deps.db)),
    scope: new AssignmentScope(deps.access, new AssignmentsRepository(deps.db)),
  }, deps.config.ingestFeatures ? new ImageFeatureRecorder(new ImageFeaturesRepository(deps.db), deps.blobs) : undefined);
  imagesRoutes(app, service, deps.config.maxUploadBytes);
}
