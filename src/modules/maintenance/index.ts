import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { MaintenanceRepository } from './maintenance.repository.js';
import { MaintenanceService } from './maintenance.service.js';
import { TemporaryFiles } from './temporary-files.adapter.js';

/**
 * The sweep of temporary files and orphan blobs after a crash. It runs once when the server starts (in the
 * background: a large store takes a while to list, and nothing waits for it) and logs what it removed. Every process
 * sweeps its own DATA_DIR/tmp and the shared store (listed through the BlobStore).
 */
export function registerMaintenanceModule(app: FastifyInstance, deps: ModuleDeps): MaintenanceService {
  const service = new MaintenanceService(
    new MaintenanceRepository(deps.db),
    deps.blobs,
    new TemporaryFiles(join(deps.config.dataDir, 'tmp')),
    deps.config.importStaleSeconds,
  );
  app.addHook('onReady', async () => {
    void service
      .sweep()
      .then((report) => app.log.info(report, 'sweep of temporary files and orphan blobs finished'))
      .catch((err) => app.log.warn({ err }, 'sweep of temporary files and orphan blobs failed'));
  });
  return service;
}
