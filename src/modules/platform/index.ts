import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../http/authenticate.js';
import { VERSION } from '../../version.js';
import type { ModuleDeps } from '../module-deps.js';
import type { ProjectsService } from '../projects/projects.service.js';
import { platformRoutes } from './platform.routes.js';
import { PlatformService, type ReadinessProbe } from './platform.service.js';

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface PlatformServices {
  readonly projects: ProjectsService;
  readonly probes: readonly ReadinessProbe[];
}

/** Health, readiness, version, instance statistics and the Prometheus metrics (`auth` checks the metrics' callers). */
export function registerPlatformModule(app: FastifyInstance, deps: ModuleDeps<PlatformServices>, auth: Authenticator): void {
  platformRoutes(app, new PlatformService(VERSION, deps.services.projects, deps.services.probes, deps.metrics, deps.config.metricsToken), auth);
}
