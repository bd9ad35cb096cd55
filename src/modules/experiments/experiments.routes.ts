import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { ExperimentsService } from './experiments.service.js';
import {
  CompareOut,
  CompareRequest,
  ExperimentDetailOut,
  ExperimentErrorsOut,
  ExperimentErrorsQuery,
  ExperimentListQuery,
  ExperimentOut,
  ExperimentPatch,
} from './experiments.schemas.js';

export function experimentsRoutes(server: FastifyInstance, experiments: ExperimentsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['experiments'];

  app.get('/api/projects/:id/experiments', {
    schema: {
      tags,
      summary: "A project's experiments, newest first (filters: status, adapter, version_id, tag)",
      params: IdParams,
      querystring: ExperimentListQuery,
      response: { 200: Type.Array(ExperimentOut), ...errors(401, 404, 422) },
    },
  }, async (request) => experiments.list(callerOf(request), request.params.id, request.query));

  app.get('/api/experiments/:id', {
    schema: {
      tags,
      summary: 'An experiment with its per-epoch history, per-class metrics, confusion matrix, environment and artifacts',
      params: IdParams,
      response: { 200: ExperimentDetailOut, ...errors(401, 404, 422) },
    },
  }, async (request) => experiments.get(callerOf(request), request.params.id));

  app.get('/api/experiments/:id/errors', {
    schema: {
      tags,
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
      tags,
      summary: 'Rename, tag or annotate an experiment',
      params: IdParams,
      body: ExperimentPatch,
      response: { 200: ExperimentOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => experiments.update(callerOf(request), request.params.id, request.body));

  app.post('/api/experiments/compare', {
    schema: {
      tags,
      summary: 'Experiments side by side: params and metrics per experiment in the order given, with their histories',
      body: CompareRequest,
      response: { 200: CompareOut, ...errors(401, 404, 422) },
    },
  }, async (request) => experiments.compare(callerOf(request), request.body.ids));
}
