import type { FastifyInstance } from 'fastify';
import { JobsRepository } from '../../jobs/jobs.repository.js';
import type { ReadinessEvaluator } from '../../training/readiness.js';
import type { TabularDataSource } from '../../training/tabular-data.js';
import type { ModelsService } from '../models/models.service.js';
import type { ModuleDeps } from '../module-deps.js';
import { TrainingRepository } from './training.repository.js';
import { trainingRoutes } from './training.routes.js';
import { TRAIN_JOB, TrainingService, type TrainPayload } from './training.service.js';

const ADMIT_EVERY_MS = 5000;

/**
 * Training runs (the experiments module serves their records). `readiness` is the data-quality module's evaluator
 * (the gate); `tabularData` the samples module's writer of the tabular folder (`adapters/train`). Returns the service
 * (pipelines' train step and the adapters module call it).
 */
export async function registerTrainingModule(
  app: FastifyInstance,
  deps: ModuleDeps,
  models: ModelsService,
  readiness: ReadinessEvaluator,
  tabularData: TabularDataSource,
): Promise<TrainingService> {
  const repository = new TrainingRepository(deps.db);
  const service = new TrainingService(
    repository,
    new JobsRepository(deps.db),
    deps.access,
    deps.queue,
    deps.blobs,
    models,
    readiness,
    tabularData,
    { dataDir: deps.config.dataDir, python: deps.config.python, perProject: deps.config.trainingPerProject, queuedPerUser: deps.config.trainingQueuedPerUser, trainerEnv: deps.config.trainerEnv, metrics: deps.metrics },
  );
  // As for jobs and versions (app.ts, versions/index.ts): without Redis a run dies with its process, so a start fails
  // its own; with Redis other workers' runs are alive and BullMQ re-queues those whose worker died.
  if (!deps.config.redisUrl) await service.failInterrupted();
  deps.queue.register<TrainPayload>(TRAIN_JOB, (ctx) => service.runJob(ctx));
  // Runs end and slots free up in any process, and a cancelled job frees its slot without a run ending: look again now and then.
  const admitting = setInterval(() => void service.admitWaiting().catch((err) => app.log.warn({ err }, 'admitting training runs failed')), ADMIT_EVERY_MS);
  admitting.unref();
  app.addHook('onClose', async () => clearInterval(admitting));
  models.addRunSource((caller) => service.runWeights(caller));
  trainingRoutes(app, service);
  return service;
}
