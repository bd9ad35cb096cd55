import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import { SplitsRepository } from './splits.repository.js';
import { splitsRoutes } from './splits.routes.js';
import { SplitsService } from './splits.service.js';

export function registerSplitsModule(app: FastifyInstance, deps: ModuleDeps<{ readonly locks: LockGuard }>): void {
  splitsRoutes(app, new SplitsService(new SplitsRepository(deps.db), deps.access, deps.blobs, deps.services.locks));
}
