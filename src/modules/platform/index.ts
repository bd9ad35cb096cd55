import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../http/authenticate.js';
import { VERSION } from '../../version.js';
import type { ModuleDeps } from '../module-deps.js';
import { platformRoutes } from './platform.routes.js';
import { PlatformService } from './platform.service.js';

/** Health, readiness, version, instance statistics and the Prometheus metrics (`auth` checks the metrics' callers). */
export function registerPlatformModule(app: FastifyInstance, deps: ModuleDeps, auth: Authenticator): void {
  platformRoutes(app, new PlatformService(VERSION, deps.services.projects, deps.services.probes, deps.metrics, deps.config.metricsToken), auth);
}
