import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { MaintenanceRepository } from './maintenance.repository.js';
import { MaintenanceService } from './maintenance.service.js';
import { StoredFiles } from './stored-files.adapter.js';

/**
 * The sweep of temporary files and orphan blobs after a crash. It runs once when the server starts (in the
 * background: a large store takes a while to list, and nothing waits for it) and logs what it removed.
 */
export function registerMaintenanceModule(app: FastifyInstance, deps: ModuleDeps): MaintenanceService {
  const service = new MaintenanceService(
    new MaintenanceRepository(deps.db),
    new StoredFiles(join(deps.config.dataDir, 'blobs'), join(deps.config.dataDir, 'tmp')),
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
