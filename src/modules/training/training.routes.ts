import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { ErrorOut, errors, Id, IdParams } from '../../http/schemas.js';
import type { TrainingService } from './training.service.js';
import { AdapterOut, GateOut, TrainJobOut, TrainRequest, TrainStatusOut } from './training.schemas.js';

export function trainingRoutes(server: FastifyInstance, training: TrainingService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['training'];

  app.get('/api/training/adapters', {
    schema: {
      tags,
      summary: 'Training adapters, with whether each can run here and what to install when not',
      response: { 200: Type.Array(AdapterOut), ...errors(401) },
    },
  }, async (request) => {
    callerOf(request);
    return training.adapters();
  });

  app.post('/api/projects/:id/train', {
    schema: {
      tags,
      summary: 'Train a model on a dataset version (background job)',
      description: 'Validates the version (ready, of this project), adapter (available, for this project type), model, device and '
        + 'parameters; applies the readiness gate (`require_ready`, `min_readiness_score`: 409 with the readiness report, nothing started); '
        + 'records an experiment and queues the run. Follow it at `GET /api/train/jobs/{job_id}`; cancel with `POST /api/jobs/{id}/cancel`. '
        + 'A successful run registers its model (lifecycle development).',
      params: IdParams,
      body: TrainRequest,
      response: { 202: TrainJobOut, ...errors(401, 403, 404, 422), 409: GateOut },
    },
  }, async (request, reply) => reply.status(202).send(await training.startTraining(callerOf(request), request.params.id, request.body)));

  app.get('/api/projects/:id/train/status', {
    schema: {
      tags,
      summary: "The project's training: `active` while one is queued or running, else `latest`, or `idle` when none ever ran",
      params: IdParams,
      response: { 200: TrainStatusOut, ...errors(401, 404, 422) },
    },
  }, async (request) => training.status(callerOf(request), request.params.id));

  app.get('/api/train/jobs/:job_id', {
    schema: {
      tags,
      summary: 'A training job: progress, ETA, epoch, latest metrics, the model once registered',
      params: Type.Object({ job_id: Id }),
      response: { 200: TrainJobOut, ...errors(401, 404, 422) },
    },
  }, async (request) => training.trainJob(callerOf(request), request.params.job_id));

  void ErrorOut;
}
