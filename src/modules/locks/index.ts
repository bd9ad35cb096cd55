import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { LocksRepository } from './locks.repository.js';
import { locksRoutes } from './locks.routes.js';
import { LocksService } from './locks.service.js';

export function registerLocksModule(app: FastifyInstance, deps: ModuleDeps): void {
  locksRoutes(app, new LocksService(new LocksRepository(deps.db), deps.access, deps.services.scope, deps.services.images));
}
