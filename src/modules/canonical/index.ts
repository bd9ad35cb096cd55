import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { CanonicalRepository } from './canonical.repository.js';
import { canonicalRoutes } from './canonical.routes.js';
import { CanonicalSamples } from './canonical-samples.service.js';
import { CanonicalService } from './canonical.service.js';

/** The canonical export: every image and sample as one universal record, streamed from the read-only scan connection. */
export function registerCanonicalModule(app: FastifyInstance, deps: ModuleDeps): void {
  const repository = new CanonicalRepository(deps.scanDb);
  canonicalRoutes(app, new CanonicalService(deps.access, repository, new CanonicalSamples(repository)));
}
