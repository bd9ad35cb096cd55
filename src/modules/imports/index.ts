import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { BlobClaims } from '../../storage/blob-claims.js';
import type { ImageIngest } from '../images/image-ingest.service.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { ProjectsRepository } from '../projects/projects.repository.js';
import type { RevisionsRepository } from '../revisions/revisions.repository.js';
import type { SamplesService } from '../samples/samples.service.js';
import { ImportsRepository } from './imports.repository.js';
import { importsRoutes } from './imports.routes.js';
import { ImportsService } from './imports.service.js';
import { sampleImportsRoutes } from './sample-imports.routes.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface ImportsServices {
  readonly locks: LockGuard;
  readonly projectsRepository: ProjectsRepository;
  readonly revisions: RevisionsRepository;
  readonly blobClaims: BlobClaims;
  readonly ingest: ImageIngest;
}

/**
 * Every `import` URL: datasets into a new or an existing project (this module's service), and data files of samples
 * (`import/{text,tabular,jsonl}`, read by the samples service it is handed).
 */
export function registerImportsModule(app: FastifyInstance, deps: ModuleDeps<ImportsServices>, samples: SamplesService): ImportsService {
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
  sampleImportsRoutes(app, samples, { workDir, maxImportBytes: deps.config.maxImportBytes });
  // Imports killed with their process are removed before this one serves (those of live processes are fresh).
  app.addHook('onReady', async () => {
    await service.recoverAbandoned();
  });
  return service;
}
