import type { FastifyInstance } from 'fastify';
import { JobsRepository } from '../../jobs/jobs.repository.js';
import type { ExportsService } from '../exports/exports.service.js';
import type { ImagesService } from '../images/images.service.js';
import type { ModuleDeps } from '../module-deps.js';
import type { StorageBuckets } from './storage-buckets.adapter.js';
import type { StoragesRepository } from './storages.repository.js';
import { storagesRoutes } from './storages.routes.js';
import { SYNC_JOB, StoragesService, type SyncPayload } from './storages.service.js';

/**
 * Project storages (issue 27). The repository and the bucket clients are built by the composition root, because the
 * blob store reads images imported by reference through them; the images and exports services are those modules'.
 */
export function registerStoragesModule(
  app: FastifyInstance,
  deps: ModuleDeps,
  pieces: { repository: StoragesRepository; buckets: StorageBuckets; images: ImagesService; exports: ExportsService },
): StoragesService {
  const service = new StoragesService(pieces.repository, pieces.buckets, deps.access, deps.queue, new JobsRepository(deps.db), pieces.images, pieces.exports, deps.blobs, {
    allowlist: deps.config.storageAllowlist,
    maxObjectBytes: deps.config.maxUploadBytes,
  });
  deps.queue.register<SyncPayload>(SYNC_JOB, (ctx) => service.runSync(ctx));
  // Every process looks for due syncs now and then; each due sync is claimed by exactly one (see syncDue).
  const scheduling = setInterval(() => void service.syncDue().catch((err) => app.log.warn({ err }, 'starting scheduled storage syncs failed')), deps.config.storageSyncCheckMs);
  scheduling.unref();
  app.addHook('onClose', async () => {
    clearInterval(scheduling);
    pieces.buckets.close();
  });
  storagesRoutes(app, service);
  return service;
}
