import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { SampleAdapters } from '../samples/training-layouts.adapter.js';
import { AdapterPrepareBody, AdapterPrepareOut } from '../samples/samples.schemas.js';
import type { TrainingService } from '../training/training.service.js';
import { GateOut, TabularTrainRequest, TrainJobOut } from '../training/training.schemas.js';

/** `/api/projects/{id}/adapters/*`: a project's samples written in a trainer's layout, and the tabular trainer run on them. */
export function adaptersRoutes(server: FastifyInstance, samples: SampleAdapters, training: TrainingService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/projects/:id/adapters/prepare', {
    schema: {
      tags: ['samples'],
      summary: 'Write the samples in a training layout',
      description: '`tabular`: `train.csv`, `valid.csv`, `test.csv` (header row, missing values empty, cells as stored: '
        + 'data for a trainer, not neutralised for spreadsheets) and `schema.json` `{target, task, columns, classes}`. `hub`: a zip that `datasets.load_dataset(path)` '
        + 'loads once extracted — one JSONL per split and a README.md card with YAML front matter (features, splits, class '
        + 'names). Samples without a split are left out unless none has one. Files download through `GET /api/exports/{filename}`.',
      params: IdParams,
      body: AdapterPrepareBody,
      response: { 201: AdapterPrepareOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await samples.prepare(callerOf(request), request.params.id, request.body)));

  app.post('/api/projects/:id/adapters/train', {
    schema: {
      tags: ['training', 'samples'],
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
}
