import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams, TextResponse } from '../../http/schemas.js';
import { sendPage } from '../../http/pagination.js';
import {
  LIMITS,
  PipelineCreate,
  PipelineDefinition,
  PipelineListQuery,
  PipelineOut,
  PipelineProblemsOut,
  PipelineRunOut,
  PipelineUpdate,
  RunRequest,
  RunsQuery,
  StepTypeOut,
  ValidateQuery,
  ValidationOut,
} from './pipelines.schemas.js';
import type { PipelinesService } from './pipelines.service.js';

const YamlBody = Type.String({ maxLength: LIMITS.textBytes, description: 'The pipeline definition as YAML (`Content-Type: application/yaml` or `text/plain`)' });
const bad = { ...errors(401, 403, 404, 413), 422: PipelineProblemsOut };
const RUN_READS = 'A run reports on the whole project: an annotator kept to their assignments (`assigned_only` projects) gets 403.';

/**
 * Pipelines and their runs. JSON and YAML bodies are read as text in this scope, so a syntax error answers 422 with
 * its line and column (Fastify's own parser answers 400 without them).
 */
export async function pipelinesRoutes(server: FastifyInstance, service: PipelinesService): Promise<void> {
  await server.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: LIMITS.textBytes }, (_request, body, done) => {
      try {
        done(null, (body as string).length === 0 ? undefined : service.parseJsonBody(body as string));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    scope.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'], { parseAs: 'string', bodyLimit: LIMITS.textBytes }, (_request, body, done) => done(null, body));
    checkRoutes(scope, service);
    createRoutes(scope, service);
    pipelineRoutes(scope, service);
    runRoutes(scope, service);
  });
}

const tags = ['pipelines'];

/** The step types, the example, and checking a definition (JSON or YAML) without saving it. */
function checkRoutes(server: FastifyInstance, service: PipelinesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/pipelines/step-types', {
    schema: { tags, summary: 'Pipeline step types, each with the JSON Schema of its params and the data it takes and gives', response: { 200: Type.Array(StepTypeOut), ...errors(401) } },
  }, async () => service.stepTypes());

  app.get('/api/pipelines/example', {
    schema: { tags, summary: 'The protective-equipment check: select → detect person/helmet/vest → rule → flag for review → report', response: { 200: PipelineDefinition, ...errors(401) } },
  }, async () => service.example());

  app.post('/api/pipelines/validate', {
    schema: {
      tags,
      summary: 'Check a JSON definition; every problem with its path',
      description: "Each step's params are checked against the schema of the route the step stands for (a `train` step's against POST /api/projects/{id}/train). "
        + 'Models, versions and classes named by id must be of the project given as `project_id` (of a project of the organization `org_id`; '
        + 'without either, of a project you can see); with `project_id`, the models and classes named by name are checked too. Malformed JSON is 422 with its line and column.',
      querystring: ValidateQuery,
      body: Type.Unknown({ description: 'A pipeline definition' }),
      response: { 200: ValidationOut, ...bad },
    },
  }, async (request) => service.validate(callerOf(request), request.body, request.query));

  app.post('/api/pipelines/validate-yaml', {
    schema: {
      tags,
      summary: 'Check a YAML definition; every problem with its path, line and column',
      description: 'Malformed YAML is 422 with its line and column; aliases that expand past the limit (billion laughs) are refused.',
      querystring: ValidateQuery,
      body: YamlBody,
      response: { 200: ValidationOut, ...bad },
    },
  }, async (request) => service.validateYaml(callerOf(request), request.body, request.query));
}

/** Creating a pipeline, from YAML or JSON. */
function createRoutes(server: FastifyInstance, service: PipelinesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/pipelines/from-yaml', {
    schema: {
      tags,
      summary: 'Create a pipeline from YAML (kept with its comments for GET …/yaml); `project_id` or `org_id` names its owner',
      querystring: ValidateQuery,
      body: YamlBody,
      response: { 201: PipelineOut, ...bad },
    },
  }, async (request, reply) => reply.status(201).send(await service.createFromYaml(callerOf(request), request.body, request.query)));

  app.post('/api/pipelines', {
    schema: {
      tags,
      summary: "Create a pipeline owned by a project (its admins) or an organization (its owners and admins); neither: only you see it",
      description: 'An absent, null or `{}` definition is replaced by the protective-equipment example; an empty `steps` list is 422. '
        + "Problems are 422 with their paths: steps' params are checked against their routes' schemas, and models, versions and classes named by id must be the owner's.",
      body: PipelineCreate,
      response: { 201: PipelineOut, ...bad },
    },
  }, async (request, reply) => reply.status(201).send(await service.create(callerOf(request), request.body ?? {})));
}

/** Pipelines: list, read (JSON or YAML), change, delete. */
function pipelineRoutes(server: FastifyInstance, service: PipelinesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/pipelines', {
    schema: {
      tags,
      summary: "A project's or an organization's pipelines; neither: those of every project and organization you belong to, and your own",
      querystring: PipelineListQuery,
      response: { 200: Type.Array(PipelineOut), ...errors(401, 404, 422) },
    },
  }, async (request) => service.list(callerOf(request), request.query));

  app.get('/api/pipelines/:id', {
    schema: { tags, summary: 'One pipeline', params: IdParams, response: { 200: PipelineOut, ...errors(401, 404, 422) } },
  }, async (request) => service.get(callerOf(request), request.params.id));

  app.get('/api/pipelines/:id/yaml', {
    schema: {
      tags,
      summary: 'The pipeline as YAML (the text it was saved from, comments included, while it matches the definition)',
      params: IdParams,
      response: { 200: TextResponse('The definition as YAML', 'application/yaml'), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => reply.type('application/yaml; charset=utf-8').send(await service.yaml(callerOf(request), request.params.id)));

  app.put('/api/pipelines/:id', {
    schema: { tags, summary: 'Change a pipeline (its definition as JSON or YAML, its name, its description)', params: IdParams, body: PipelineUpdate, response: { 200: PipelineOut, ...bad } },
  }, async (request) => service.update(callerOf(request), request.params.id, request.body));

  app.delete('/api/pipelines/:id', {
    schema: { tags, summary: 'Delete a pipeline with its run history', params: IdParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await service.delete(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });
}

/** Runs: start one, list a pipeline's, follow one, cancel one. */
function runRoutes(server: FastifyInstance, service: PipelinesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/pipelines/:id/run', {
    schema: {
      tags,
      summary: 'Run a pipeline in the background',
      description: 'Answers 202 with the run; follow it at GET /api/pipeline-runs/{id}. A pipeline that writes data needs a project admin; '
        + 'an annotator kept to their assignments (`assigned_only` projects) gets 403: a run reads the whole project. '
        + "An organization's pipeline runs on one of the organization's projects (its members with access to that project), named by `project_id`. "
        + "The definition is checked against the project first (models, classes, versions): problems are 422. The run keeps the definition it ran.",
      params: IdParams,
      body: RunRequest,
      response: { 202: PipelineRunOut, ...bad },
    },
  }, async (request, reply) => reply.status(202).send(await service.run(callerOf(request), request.params.id, request.body ?? {})));

  app.get('/api/pipelines/:id/runs', {
    schema: { tags, summary: "A pipeline's runs, newest first", description: RUN_READS, params: IdParams, querystring: RunsQuery, response: { 200: Type.Array(PipelineRunOut), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => sendPage(request, reply, await service.runs(callerOf(request), request.params.id, request.query), request.query.limit));

  app.get('/api/pipeline-runs/:id', {
    schema: { tags, summary: 'One run: status, progress with ETA, per-step status, timings and outputs', description: RUN_READS, params: IdParams, response: { 200: PipelineRunOut, ...errors(401, 403, 404, 422) } },
  }, async (request) => service.getRun(callerOf(request), request.params.id));

  app.post('/api/pipeline-runs/:id/cancel', {
    schema: { tags, summary: 'Cancel a queued or running run (its running step stops within a second and ends cancelled; what it wrote stays recorded)', params: IdParams, response: { 200: PipelineRunOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => service.cancelRun(callerOf(request), request.params.id));
}
