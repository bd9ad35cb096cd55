import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import type { ModelRuntime } from './model-runtime.adapter.js';
import type { ModelsRepository } from './models.repository.js';
import { modelsRoutes } from './models.routes.js';
import { ModelsService } from './models.service.js';
import { ProjectModelsService } from './project-models.service.js';

export interface ModelsModule {
  readonly runtime: ModelRuntime;
  readonly repository: ModelsRepository;
  readonly service: ModelsService;
}

/** The shared services this module takes (its port): src/app.ts builds each once. */
interface ModelsServices {
  readonly models: { readonly runtime: ModelRuntime; readonly repository: ModelsRepository };
}

/** The model registry's routes; its runtime and repository are shared (auto-annotate runs on them) and come built. */
export function registerModelsModule(app: FastifyInstance, deps: ModuleDeps<ModelsServices>): ModelsModule {
  const { runtime, repository } = deps.services.models;
  const service = new ModelsService(repository, deps.access, deps.blobs, runtime, {
    modelsRoot: deps.config.modelsRoot,
    runsRoot: deps.config.runsRoot,
    uploadDir: join(deps.config.dataDir, 'tmp', 'model-uploads'),
  });
  modelsRoutes(app, service, new ProjectModelsService(service, repository, deps.access), deps.config.maxModelUploadBytes);
  return { runtime, repository, service };
}
