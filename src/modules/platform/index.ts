import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../version.js';
import type { ModuleDeps } from '../module-deps.js';
import { platformRoutes } from './platform.routes.js';
import { PlatformService } from './platform.service.js';

/** Health, readiness, version and instance statistics. */
export function registerPlatformModule(app: FastifyInstance, deps: ModuleDeps): void {
  platformRoutes(app, new PlatformService(VERSION, deps.services.projects, deps.services.probes));
}
