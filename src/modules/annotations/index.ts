import type { FastifyInstance } from 'fastify';
import { WriteBatcher } from '../../db/write-batcher.js';
import type { ModuleDeps } from '../module-deps.js';
import { AnnotationsRepository } from './annotations.repository.js';
import { annotationsRoutes } from './annotations.routes.js';
import { AnnotationsService } from './annotations.service.js';

export function registerAnnotationsModule(app: FastifyInstance, deps: ModuleDeps): void {
  const service = new AnnotationsService(new WriteBatcher(deps.db), new AnnotationsRepository(deps.db), deps.access);
  annotationsRoutes(app, service);
}
