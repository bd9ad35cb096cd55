import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { builtinSteps } from './builtin-steps.js';
import type { PipelinePorts } from './pipeline-ports.js';
import { PipelineReach } from './pipeline-reach.js';
import { PipelineRunner } from './pipeline-runner.js';
import { PipelinesRepository } from './pipelines.repository.js';
import { pipelinesRoutes } from './pipelines.routes.js';
import { PIPELINE_RUN_JOB, PipelinesService, type PipelineRunPayload } from './pipelines.service.js';

export type { PipelinePorts, QualityPort, CleaningPort, TrainingPort } from './pipeline-ports.js';
export { WebhookSender } from './webhook-sender.js';

/**
 * Pipelines: registers the built-in step types in the plugin registry, the run job on the shared queue, and the
 * routes. `ports` are the other modules' services the steps call (see pipeline-ports.ts).
 */
export async function registerPipelinesModule(app: FastifyInstance, deps: ModuleDeps, ports: PipelinePorts): Promise<PipelinesService> {
  const repository = new PipelinesRepository(deps.db);
  const runner = new PipelineRunner(repository, deps.plugins);
  const reach = new PipelineReach(repository, deps.access, deps.orgAccess);
  const service = new PipelinesService(repository, deps.plugins, deps.access, deps.queue, runner, reach);
  for (const step of builtinSteps({ repository, ports, callerOf: (userId) => service.callerOf(userId), webhookAllowlist: deps.config.webhookAllowlist })) {
    deps.plugins.register(step);
  }
  await service.closeInterrupted();
  deps.queue.register<PipelineRunPayload>(PIPELINE_RUN_JOB, (ctx) => service.runJob(ctx));
  await pipelinesRoutes(app, service);
  return service;
}
