import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { ModelRuntime } from './model-runtime.js';
import { ModelsRepository } from './models.repository.js';
import { modelsRoutes } from './models.routes.js';
import { ModelsService } from './models.service.js';

export interface ModelsModule {
  readonly runtime: ModelRuntime;
  readonly repository: ModelsRepository;
  readonly service: ModelsService;
}

/** The model registry; returns the inference runtime and repository for the auto-annotate module. */
export function registerModelsModule(app: FastifyInstance, deps: ModuleDeps): ModelsModule {
  const runtime = new ModelRuntime(deps.blobs, deps.config.dataDir);
  app.addHook('onClose', () => runtime.close());
  const repository = new ModelsRepository(deps.db);
  const service = new ModelsService(repository, deps.access, deps.blobs, runtime, {
    modelsRoot: deps.config.modelsRoot,
    runsRoot: deps.config.runsRoot,
    uploadDir: join(deps.config.dataDir, 'tmp', 'model-uploads'),
  });
  modelsRoutes(app, service, deps.config.maxModelUploadBytes);
  return { runtime, repository, service };
}
