import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { ModelsService } from './models.service.js';
import {
  DeviceOut,
  LifecycleUpdate,
  ModelListQuery,
  ModelOut,
  ModelParams,
  ModelRegister,
  ModelUploadBody,
  ProjectModelOut,
  ProjectModelsQuery,
  RunWeightsOut,
  UnprocessableOut,
} from './models.schemas.js';
import type { ProjectModelsService } from './project-models.service.js';
import { modelUploadForm } from './upload-parts.adapter.js';

export function modelsRoutes(server: FastifyInstance, models: ModelsService, projectModels: ProjectModelsService, maxUploadBytes: number): void {
  modelListRoutes(server, models, projectModels);
  modelAddRoutes(server, models, maxUploadBytes);
  modelRecordRoutes(server, models);
}

/** The registry's models: all you may see, a project's own and shared ones. */
function modelListRoutes(server: FastifyInstance, models: ModelsService, projectModels: ProjectModelsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['models'];

  app.get('/api/models', {
    schema: {
      tags,
      summary: 'Registered models of the projects you can read, newest first',
      querystring: ModelListQuery,
      response: { 200: Type.Array(ModelOut), ...errors(401, 404, 422) },
    },
  }, async (request) => models.list(callerOf(request), request.query.project_id));

  app.get('/api/projects/:id/models', {
    schema: {
      tags,
      summary: "A project's registered models, newest first",
      description: 'With `include_shared=true`, then the production models of the other projects of the same owner or organization '
        + 'that you can read, each with `shared`: its project and which of its classes this project has (matched by name) or lacks.',
      params: IdParams,
      querystring: ProjectModelsQuery,
      response: { 200: Type.Array(ProjectModelOut), ...errors(401, 404, 422) },
    },
  }, async (request) => projectModels.list(callerOf(request), request.params.id, request.query.include_shared));
}

/** Adding a model to a project: by a path on the server, or by upload. */
function modelAddRoutes(server: FastifyInstance, models: ModelsService, maxUploadBytes: number): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['models'];

  app.post('/api/projects/:id/models', {
    schema: {
      tags,
      summary: 'Register a model file that is on the server',
      description: '`path` must lie under MODELS_ROOT and `run_weights` under RUNS_ROOT (symlinks are resolved first); anything '
        + 'else, or the root being unset, is 403. ONNX files are loaded once to check them and to read their task, input size '
        + 'and class names (Ultralytics metadata); `.pt` files are only hashed, never opened. 409 when the project already has '
        + 'a model of that name or that very file.',
      params: IdParams,
      body: ModelRegister,
      response: { 201: ModelOut, ...errors(401, 403, 404, 409), 422: UnprocessableOut },
    },
  }, async (request, reply) => reply.status(201).send(await models.registerPath(callerOf(request), request.params.id, request.body)));

  app.post('/api/projects/:id/models/upload', {
    schema: {
      tags,
      summary: 'Upload and register a model file',
      description: 'Multipart: the file in a part named `file`, optional text parts `name`, `task` and `class_names`. Limited to '
        + 'MAX_MODEL_UPLOAD_MB (413 beyond). Checked like a registered path; 409 for a duplicate name or file.',
      consumes: ['multipart/form-data'],
      params: IdParams,
      body: ModelUploadBody,
      response: { 201: ModelOut, ...errors(400, 401, 403, 404, 409, 413), 422: UnprocessableOut },
    },
    // The handler streams the parts, so the body schema only documents them; this placeholder satisfies it.
    preValidation: async (request) => {
      request.body = { file: '' };
    },
  }, async (request, reply) =>
    reply.status(201).send(await models.upload(callerOf(request), request.params.id, modelUploadForm(request, maxUploadBytes))));
}

/** The training runs' outputs, one model's deletion and lifecycle, and the device inference runs on. */
function modelRecordRoutes(server: FastifyInstance, models: ModelsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['models'];

  app.get('/api/models/runs', {
    schema: {
      tags,
      summary: 'Weights of training runs: Ultralytics run folders under RUNS_ROOT and Versa\'s own training runs',
      description: 'Ultralytics-style `<task>/<run>/weights/{best,last}.{pt,onnx}`, directly under RUNS_ROOT or its `runs/` folder, '
        + 'with the last epoch\'s metrics from the run\'s results.csv; and Versa\'s training runs of projects you can read (`source: versa`, '
        + 'already registered as `model_id`). 403 when RUNS_ROOT is not set. Register a RUNS_ROOT one with '
        + '`POST /api/projects/{id}/models {"run_weights": path}`.',
      response: { 200: Type.Array(RunWeightsOut), ...errors(401, 403) },
    },
  }, async (request) => models.runs(callerOf(request)));

  app.delete('/api/models/:model_id', {
    schema: { tags, summary: 'Delete a model (and its stored file, for uploads)', params: ModelParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await models.delete(callerOf(request), request.params.model_id);
    return reply.status(204).send(null);
  });

  app.patch('/api/models/:model_id/lifecycle', {
    schema: {
      tags,
      summary: "Change a model's lifecycle stage",
      description: 'development, staging, production or archived, in any order. One production model per project and task: '
        + 'promoting one archives the previous. Every change is recorded with who and when in `lifecycle_history`.',
      params: ModelParams,
      body: LifecycleUpdate,
      response: { 200: ModelOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => models.setLifecycle(callerOf(request), request.params.model_id, request.body.lifecycle));

  app.get('/api/system/device', {
    schema: {
      tags: ['system'],
      summary: 'Where inference runs: execution providers, CUDA availability, default device, threads',
      response: { 200: DeviceOut, ...errors(401) },
    },
  }, async (request) => {
    callerOf(request);
    return models.device();
  });
}
