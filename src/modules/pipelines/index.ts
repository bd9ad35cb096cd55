import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { builtinSteps } from './builtin-steps.service.js';
import type { PipelinePorts } from './pipelines.ports.js';
import { PipelineReach } from './pipeline-reach.service.js';
import { PipelineRunner } from './pipeline-runner.service.js';
import { PipelinesRepository } from './pipelines.repository.js';
import { pipelinesRoutes } from './pipelines.routes.js';
import { PIPELINE_RUN_JOB, PipelinesService, type PipelineRunPayload } from './pipelines.service.js';

export type { PipelinePorts, QualityPort, CleaningPort, TrainingPort } from './pipelines.ports.js';
export { WebhookSender } from './webhook-sender.adapter.js';

/**
 * Pipelines: registers the built-in step types in the plugin registry, the run job on the shared queue, and the
 * routes. `ports` are the other modules' services the steps call (see pipelines.ports.ts).
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
