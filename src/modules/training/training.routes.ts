import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { ErrorOut, errors, Id, IdParams } from '../../http/schemas.js';
import { ReadinessOut } from '../../training/readiness.js';
import type { ExperimentsService } from './experiments.service.js';
import type { TrainingService } from './training.service.js';
import {
  AdapterOut,
  CompareOut,
  CompareRequest,
  ExperimentDetailOut,
  ExperimentErrorsOut,
  ExperimentErrorsQuery,
  ExperimentListQuery,
  ExperimentOut,
  ExperimentPatch,
  TabularTrainRequest,
  TrainJobOut,
  TrainRequest,
  TrainStatusOut,
} from './training.schemas.js';

const GateOut = Type.Object(
  { detail: Type.String(), readiness: Type.Optional(ReadinessOut) },
  { additionalProperties: true, description: 'Readiness gate blocked the run (with `readiness`), or the version is not ready' },
);

export function trainingRoutes(server: FastifyInstance, training: TrainingService, experiments: ExperimentsService): void {
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

  app.post('/api/projects/:id/adapters/train', {
    schema: {
      tags: [...tags, 'samples'],
      summary: "Train the tabular adapter on the project's tabular samples (background job)",
      description: 'Gradient-boosted trees (scikit-learn) on the target column of the tabular import, with the same job, experiment, '
        + 'readiness gate and model registration as `POST /api/projects/{id}/train`; needs `models.write`. The job writes the samples '
        + 'as they are when it starts, in the layout `adapters/prepare {adapter: "tabular"}` gives (samples in no split are left out '
        + 'unless none has a split), into a data folder removed when the job ends. The experiment\'s metrics: `accuracy` and macro `f1` '
        + '(classification) or `rmse` and `r2` (regression) on the valid split, and the same as `test_*` on the test split; the model '
        + 'is registered with task `tabular` (a pickle, format `other`). 409: the gate (`require_ready`, `min_readiness_score`) blocks, '
        + 'with `readiness` and its blockers (for example a project without tabular samples), or the train or valid split is empty '
        + '(whatever `require_ready`: the run needs both); nothing is started. 422: an invalid body, or scikit-learn is missing.',
      params: IdParams,
      body: TabularTrainRequest,
      response: { 202: TrainJobOut, ...errors(401, 403, 404, 422), 409: GateOut },
    },
  }, async (request, reply) => reply.status(202).send(await training.trainTabular(callerOf(request), request.params.id, request.body)));

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

  app.get('/api/projects/:id/experiments', {
    schema: {
      tags: ['experiments'],
      summary: "A project's experiments, newest first (filters: status, adapter, version_id, tag)",
      params: IdParams,
      querystring: ExperimentListQuery,
      response: { 200: Type.Array(ExperimentOut), ...errors(401, 404, 422) },
    },
  }, async (request) => experiments.list(callerOf(request), request.params.id, request.query));

  app.get('/api/experiments/:id', {
    schema: {
      tags: ['experiments'],
      summary: 'An experiment with its per-epoch history, per-class metrics, confusion matrix, environment and artifacts',
      params: IdParams,
      response: { 200: ExperimentDetailOut, ...errors(401, 404, 422) },
    },
  }, async (request) => experiments.get(callerOf(request), request.params.id));

  app.get('/api/experiments/:id/errors', {
    schema: {
      tags: ['experiments'],
      summary: "The valid or test images a detector's run gets most wrong (false positives, false negatives or class confusions), with its predictions",
      description: 'Each image is the project image its version image was made from, with the run\'s detections mapped into its pixels. An annotator '
        + 'kept to their assignments sees only their assigned images. 409 when the run recorded no per-image evaluation (not a finished versa-detect run)',
      params: IdParams,
      querystring: ExperimentErrorsQuery,
      response: { 200: ExperimentErrorsOut, ...errors(401, 404, 409, 422) },
    },
  }, async (request) => experiments.errors(callerOf(request), request.params.id, request.query));

  app.patch('/api/experiments/:id', {
    schema: {
      tags: ['experiments'],
      summary: 'Rename, tag or annotate an experiment',
      params: IdParams,
      body: ExperimentPatch,
      response: { 200: ExperimentOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => experiments.update(callerOf(request), request.params.id, request.body));

  app.post('/api/experiments/compare', {
    schema: {
      tags: ['experiments'],
      summary: 'Experiments side by side: params and metrics per experiment in the order given, with their histories',
      body: CompareRequest,
      response: { 200: CompareOut, ...errors(401, 404, 422) },
    },
  }, async (request) => experiments.compare(callerOf(request), request.body.ids));
  void ErrorOut;
}
