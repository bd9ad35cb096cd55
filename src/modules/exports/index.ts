import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { ExportsRepository } from './exports.repository.js';
import { exportsRoutes } from './exports.routes.js';
import { ExportsService } from './exports.service.js';

export function registerExportsModule(app: FastifyInstance, deps: ModuleDeps): ExportsService {
  const service = new ExportsService(new ExportsRepository(deps.db), deps.access, deps.blobs);
  exportsRoutes(app, service);
  return service;
}
