import { opened } from '../../http/opened-stream.js';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { sendPage } from '../../http/pagination.js';
import { BinaryResponse, errors } from '../../http/schemas.js';
import {
  DiffParams,
  ProjectParams,
  RecipeOptionsOut,
  VersionCreate,
  VersionDiffOut,
  VersionIdParams,
  VersionImageOut,
  VersionImageParams,
  VersionImagesQuery,
  VersionOut,
  VersionParams,
  VersionPreviewOut,
  VersionPreviewRequest,
} from './versions.schemas.js';
import type { VersionsService } from './versions.service.js';

const Document = (description: string) => Type.Object({}, { additionalProperties: true, description });

export function versionsRoutes(server: FastifyInstance, versions: VersionsService): void {
  recipeRoutes(server, versions);
  versionCreationRoutes(server, versions);
  versionRecordRoutes(server, versions);
  versionContentsRoutes(server, versions);
}

/** The image recipe a version is generated with: its defaults and every option. */
function recipeRoutes(server: FastifyInstance, versions: VersionsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['versions'];

  // The spec fixes this URL; what it serves is the versions' image recipe (src/imaging/recipe/), not a data pipeline
  // (src/modules/pipelines/): an exception in test/structure/route-rooms.test.ts.
  app.get('/api/pipeline/defaults', {
    schema: {
      tags,
      summary: 'Default preprocessing and augmentation configs, and every option with its range',
      description: '`options` lists each option flat (`key` dotted for nested groups) with its type, default, range or choices.',
      response: {
        200: Type.Object({
          preprocessing_config: Document('Used when preprocessing_config is null or {}'),
          augmentation_config: Document('Augmentation is off by default'),
          options: RecipeOptionsOut,
        }),
        ...errors(401),
      },
    },
  }, async () => versions.defaults());
}

/** A project's versions, a new one, and the preview of one before it is made. */
function versionCreationRoutes(server: FastifyInstance, versions: VersionsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['versions'];

  app.get('/api/projects/:project_id/versions', {
    schema: { tags, summary: "A project's versions by number", params: ProjectParams, response: { 200: Type.Array(VersionOut), ...errors(401, 404, 422) } },
  }, async (request) => versions.list(callerOf(request), request.params.project_id));

  app.post('/api/projects/:project_id/versions', {
    schema: {
      tags,
      summary: 'Create a version (generated in the background)',
      description:
        'Freezes the project as it is now (images, splits, annotations, classes) and answers 201 with the version in ' +
        '`status: "pending"`; generation runs as a background job (`job_id`, follow it at GET /api/jobs/{id}, or poll the ' +
        'version: `pending` → `generating` → `ready` | `failed`). Later edits to the project do not change the version. ' +
        'Out-of-range options are 422 with one issue per option.',
      params: ProjectParams,
      body: VersionCreate,
      response: { 201: VersionOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await versions.create(callerOf(request), request.params.project_id, request.body)));

  app.post('/api/projects/:project_id/versions/preview', {
    schema: {
      tags,
      summary: "Preview a recipe's outputs for one image before generating",
      description: 'Renders the first outputs (default 4, at most 8) a recipe gives for `image_id` (default: the first annotated image) '
        + 'as a training image, with the annotations moved along; nothing is stored. Mosaic partners are left out.',
      params: ProjectParams,
      body: VersionPreviewRequest,
      response: { 200: VersionPreviewOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => versions.preview(callerOf(request), request.params.project_id, request.body));

}

/** One version: read it (by project or by id alone), generate it again, delete it. */
function versionRecordRoutes(server: FastifyInstance, versions: VersionsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['versions'];

  app.get('/api/projects/:project_id/versions/:version_id', {
    schema: { tags, summary: 'A version', params: VersionParams, response: { 200: VersionOut, ...errors(401, 404, 422) } },
  }, async (request) => versions.get(callerOf(request), request.params.project_id, request.params.version_id));

  app.get('/api/versions/:id', {
    schema: { tags, summary: 'A version, by id alone', params: VersionIdParams, response: { 200: VersionOut, ...errors(401, 404, 422) } },
  }, async (request) => versions.get(callerOf(request), null, request.params.id));

  app.post('/api/projects/:project_id/versions/:version_id/regenerate', {
    schema: {
      tags,
      summary: 'Generate a version again',
      description: 'From its frozen snapshot and seed: the files come out byte-identical. 409 while it is still generating.',
      params: VersionParams,
      response: { 202: VersionOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(202).send(await versions.regenerate(callerOf(request), request.params.project_id, request.params.version_id)));

  app.delete('/api/projects/:project_id/versions/:version_id', {
    schema: {
      tags,
      summary: 'Delete a version and its files',
      description: '409 while an export or a training run references it.',
      params: VersionParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    await versions.delete(callerOf(request), request.params.project_id, request.params.version_id);
    return reply.status(204).send(null);
  });
}

/** What is in a version: its difference from another, its output images and their bytes. */
function versionContentsRoutes(server: FastifyInstance, versions: VersionsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['versions'];

  app.get('/api/projects/:project_id/versions/:a/diff/:b', {
    schema: {
      tags,
      summary: 'What changed from version a to version b',
      description:
        'Images added, removed and changed (by source image id, content hash, split and annotations), recipe changes, identical outputs. ' +
        'An annotator kept to their assignments (`assigned_only` projects) gets 403: the diff covers the whole project.',
      params: DiffParams,
      response: { 200: VersionDiffOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => versions.diff(callerOf(request), request.params.project_id, request.params.a, request.params.b));

  app.get('/api/projects/:project_id/versions/:version_id/images', {
    schema: {
      tags,
      summary: "A version's output images with their lineage and annotations",
      description: 'Paged with `limit` and `offset` or `after`; total in `X-Total-Count`, next page in `Link`. Optional `split` filter.',
      params: VersionParams,
      querystring: VersionImagesQuery,
      response: { 200: Type.Array(VersionImageOut), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => {
    const page = await versions.images(callerOf(request), request.params.project_id, request.params.version_id, request.query);
    return sendPage(request, reply, page, request.query.limit);
  });

  app.get('/api/projects/:project_id/versions/:version_id/images/:image_id/file', {
    schema: {
      tags,
      summary: 'The bytes of an output image (JPEG)',
      params: VersionImageParams,
      response: { 200: BinaryResponse('JPEG image', ['image/jpeg']), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => {
    const file = await versions.imageFile(callerOf(request), request.params.project_id, request.params.version_id, request.params.image_id);
    const stream = await opened(file.stream);
    reply.header('Content-Type', 'image/jpeg');
    reply.header('Cache-Control', 'private, max-age=31536000, immutable');
    if (file.size !== null) reply.header('Content-Length', String(file.size));
    return reply.send(stream);
  });
}
