import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { GENERATE_JOB, VersionGenerator, type GeneratePayload } from './generation.service.js';
import { VersionsRepository } from './versions.repository.js';
import { versionsRoutes } from './versions.routes.js';
import { VersionsService } from './versions.service.js';

export interface VersionsModule {
  readonly repository: VersionsRepository;
  readonly service: VersionsService;
}

/** Dataset versions: routes, and the generation job handler on the shared queue. */
export async function registerVersionsModule(app: FastifyInstance, deps: ModuleDeps): Promise<VersionsModule> {
  const repository = new VersionsRepository(deps.db);
  // Only the in-process queue's generations die with this process; with Redis, BullMQ's stalled-job check hands a
  // generation whose worker died to another worker (it starts over), and other workers' generations are alive.
  const generator = new VersionGenerator(repository, deps.blobs);
  if (!deps.config.redisUrl) await generator.failInterrupted();
  deps.queue.register<GeneratePayload>(GENERATE_JOB, (ctx) => generator.run(ctx));
  const service = new VersionsService(repository, deps.access, deps.queue, deps.blobs);
  versionsRoutes(app, service);
  return { repository, service };
}
