import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { DatasetProfiler } from './dataset-profile.service.js';
import { ProfilePartsRepository } from './profile-parts.repository.js';
import { ProfileRepository } from './profile.repository.js';
import { profileRoutes } from './profile.routes.js';
import { ProfileService } from './profile.service.js';
import { ProjectRevisionsRepository } from './project-revisions.repository.js';
import { SampleDataRepository } from './sample-data.repository.js';
import { SampleProfiler } from './sample-profile.service.js';

/** What the profile module offers the others: the kept profile (readiness's image statistics) and the samples' reads. */
export interface ProfileModule {
  readonly profiler: DatasetProfiler;
  readonly samples: SampleDataRepository;
}

/** How often every project's revision rows are folded (PostgreSQL; see ProjectRevisionsRepository.foldAll). */
const REVISION_FOLD_MS = 10 * 60_000;

export function registerProfileModule(app: FastifyInstance, deps: ModuleDeps): ProfileModule {
  const samples = new SampleDataRepository(deps.db);
  const revisions = new ProjectRevisionsRepository(deps.db);
  const profiler = new DatasetProfiler(new ProfileRepository(deps.db), revisions, new SampleProfiler(samples), new ProfilePartsRepository(deps.db));
  // PostgreSQL's revision rows of projects whose profile nobody opens are folded now and then.
  const folding = setInterval(() => void revisions.foldAll().catch((err) => app.log.warn({ err }, 'folding project revisions failed')), REVISION_FOLD_MS);
  folding.unref();
  app.addHook('onClose', async () => clearInterval(folding));
  profileRoutes(app, new ProfileService(deps.access, profiler, samples));
  return { profiler, samples };
}
