import type { FastifyInstance } from 'fastify';
import type { SampleAdapters } from '../samples/training-layouts.adapter.js';
import type { TrainingService } from '../training/training.service.js';
import { adaptersRoutes } from './adapters.routes.js';

/**
 * Every `/api/projects/{id}/adapters/*` route: `prepare` writes the samples in a trainer's layout (the samples module's
 * writer), `train` runs the tabular trainer on them (the training module's run, job and experiment).
 */
export function registerAdaptersModule(app: FastifyInstance, samples: SampleAdapters, training: TrainingService): void {
  adaptersRoutes(app, samples, training);
}
