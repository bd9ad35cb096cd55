import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { ImportsRepository } from './imports.repository.js';
import { importsRoutes } from './imports.routes.js';
import { ImportsService } from './imports.service.js';

export function registerImportsModule(app: FastifyInstance, deps: ModuleDeps): ImportsService {
  const workDir = join(deps.config.dataDir, 'tmp');
  const service = new ImportsService(new ImportsRepository(deps.db), deps.blobs, {
    importRoot: deps.config.importRoot,
    workDir,
    maxImageBytes: deps.config.maxUploadBytes,
    // A deeper window than uploads use: results are taken in dataset order, so one slow image must not idle the cores.
    concurrency: Math.max(4, availableParallelism()),
    maxAnnotations: deps.config.maxImportAnnotations,
    maxEntries: deps.config.maxImportEntries,
    staleSeconds: deps.config.importStaleSeconds,
  }, app.log, {
    access: deps.access,
    locks: deps.services.locks,
    transactions: deps.transactions,
    projects: deps.services.projectsRepository,
    revisions: deps.services.revisions,
    claims: deps.services.blobClaims,
  }, deps.services.ingest);
  importsRoutes(app, service, { workDir, maxArchiveBytes: deps.config.maxImportBytes });
  // Imports killed with their process are removed before this one serves (those of live processes are fresh).
  app.addHook('onReady', async () => {
    await service.recoverAbandoned();
  });
  return service;
}
