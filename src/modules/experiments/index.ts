import type { FastifyInstance } from 'fastify';
import type { ModelsService } from '../models/models.service.js';
import type { ModuleDeps } from '../module-deps.js';
import type { AssignmentScope } from '../assignments/assignment-scope.service.js';
import { ExperimentsRepository } from './experiments.repository.js';
import { experimentsRoutes } from './experiments.routes.js';
import { ExperimentsService } from './experiments.service.js';

/**
 * Experiments: the records training runs leave (list, detail, rename/tag/notes, compare, a detector's worst images).
 * A trained model serves at its run's F1 thresholds, which this module gives the models module.
 */
export function registerExperimentsModule(app: FastifyInstance, deps: ModuleDeps<{ readonly scope: AssignmentScope }>, models: ModelsService): void {
  const experiments = new ExperimentsService(new ExperimentsRepository(deps.db), deps.access, deps.services.scope);
  models.setThresholdSource((experimentId) => experiments.f1Thresholds(experimentId));
  experimentsRoutes(app, experiments);
}
