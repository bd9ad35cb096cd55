import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { RevisionsRepository } from '../revisions/revisions.repository.js';
import type { QualityService } from '../quality/quality.service.js';
import { cleaningCatalog } from './cleaning-actions.logic.js';
import { CleaningRepository } from './cleaning.repository.js';
import { cleaningRoutes } from './cleaning.routes.js';
import { CleaningService } from './cleaning.service.js';

/** What the cleaning module offers the others: the service the pipelines' cleaning step applies, and the catalog. */
export interface CleaningModule {
  readonly cleaning: CleaningService;
  readonly cleaningCatalog: typeof cleaningCatalog;
}

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface CleaningServices {
  readonly revisions: RevisionsRepository;
  readonly locks: LockGuard;
}

/** Cleaning plans its actions on the quality module's snapshot, so it is handed the quality service. */
export function registerCleaningModule(app: FastifyInstance, deps: ModuleDeps<CleaningServices>, quality: QualityService): CleaningModule {
  const cleaning = new CleaningService(deps.access, new CleaningRepository(deps.db), quality, deps.services.revisions, deps.services.locks, deps.blobs);
  cleaningRoutes(app, cleaning);
  return { cleaning, cleaningCatalog };
}
