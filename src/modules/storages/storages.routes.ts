import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { ExportRequest } from '../exports/exports.schemas.js';
import type { StoragesService } from './storages.service.js';
import {
  ConnectionTestOut,
  ObjectsQuery,
  StorageCreate,
  StorageObjectOut,
  StorageOut,
  StorageParams,
  StorageUpdate,
  StorageVersionParams,
  StorageWriteOut,
  SyncStartedOut,
} from './storages.schemas.js';

export function storagesRoutes(server: FastifyInstance, storages: StoragesService): void {
  storageRecordRoutes(server, storages);
  storageSyncRoutes(server, storages);
  storageWriteRoutes(server, storages);
}

/** A project's storages as records: list, attach, read, change, detach. */
function storageRecordRoutes(server: FastifyInstance, storages: StoragesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['storages'];

  app.get('/api/projects/:id/storages', {
    schema: { tags, summary: "The project's storages (S3-compatible buckets), oldest first", params: IdParams, response: { 200: Type.Array(StorageOut), ...errors(401, 404, 422) } },
  }, async (request) => storages.list(callerOf(request), request.params.id));

  app.post('/api/projects/:id/storages', {
    schema: {
      tags,
      summary: 'Attach a bucket + prefix to the project, as a source of images or a target of exports',
      description: 'The endpoint must be on the server\'s STORAGE_ALLOWLIST (else 422). The credentials are stored encrypted with '
        + 'the server\'s SECRETS_KEY (503 when it has none) and never answered: only `access_key_hint`. A source with '
        + '`sync_interval_minutes` is synced on that schedule. Needs the project.update permission (admins).',
      params: IdParams,
      body: StorageCreate,
      response: { 201: StorageOut, ...errors(401, 403, 404, 409, 503) },
    },
  }, async (request, reply) => reply.status(201).send(await storages.create(callerOf(request), request.params.id, request.body)));

  app.get('/api/projects/:id/storages/:storage_id', {
    schema: { tags, summary: 'One storage, with its last sync and counts', params: StorageParams, response: { 200: StorageOut, ...errors(401, 404, 422) } },
  }, async (request) => storages.get(callerOf(request), request.params.id, request.params.storage_id));

  app.patch('/api/projects/:id/storages/:storage_id', {
    schema: {
      tags,
      summary: 'Change a storage\'s name, endpoint, region, addressing, credentials (both together), import mode or schedule',
      params: StorageParams,
      body: StorageUpdate,
      response: { 200: StorageOut, ...errors(401, 403, 404, 409, 503) },
    },
  }, async (request) => storages.update(callerOf(request), request.params.id, request.params.storage_id, request.body));

  app.delete('/api/projects/:id/storages/:storage_id', {
    schema: {
      tags,
      summary: 'Detach a storage (its bucket is left as it is)',
      description: '409 while images of the project were imported from it by reference (they read their originals there).',
      params: StorageParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    await storages.delete(callerOf(request), request.params.id, request.params.storage_id);
    return reply.status(204).send(null);
  });
}

/** Reading a storage: its connection test, a source's syncs and the objects they saw. */
function storageSyncRoutes(server: FastifyInstance, storages: StoragesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['storages'];

  app.post('/api/projects/:id/storages/:storage_id/test', {
    schema: {
      tags,
      summary: 'Test the connection: list the prefix (a target also writes and deletes a probe object)',
      description: 'Answers 200 either way; `ok` and `detail` say what worked and what the server answered.',
      params: StorageParams,
      response: { 200: ConnectionTestOut, ...errors(401, 403, 404, 503) },
    },
  }, async (request) => storages.test(callerOf(request), request.params.id, request.params.storage_id));

  app.post('/api/projects/:id/storages/:storage_id/sync', {
    schema: {
      tags,
      summary: 'Sync a source storage now: import its new objects, report the ones gone',
      description: 'Answers 202 with the job. Every object under the prefix is imported once per ETag (an object with a new ETag '
        + 'is imported again as a new image); objects imported earlier that the bucket no longer lists are reported as '
        + '`missing` (their images stay). 409 for a target storage, or while a sync of it is under way.',
      params: StorageParams,
      response: { 202: SyncStartedOut, ...errors(401, 403, 404, 409, 503) },
    },
  }, async (request, reply) => reply.status(202).send(await storages.sync(callerOf(request), request.params.id, request.params.storage_id)));

  app.get('/api/projects/:id/storages/:storage_id/objects', {
    schema: {
      tags,
      summary: 'The objects a source storage\'s syncs have seen, and what became of each',
      description: '`missing=true` lists the objects gone from the bucket since they were imported. 403 for an annotator '
        + 'kept to their assignments (the listing names every image the objects became), as is starting a sync.',
      params: StorageParams,
      querystring: ObjectsQuery,
      response: { 200: Type.Array(StorageObjectOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => storages.objects(callerOf(request), request.params.id, request.params.storage_id, request.query));

}

/** Writing to a target storage: an export of the project, a version's generated files. */
function storageWriteRoutes(server: FastifyInstance, storages: StoragesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['storages'];

  app.post('/api/projects/:id/storages/:storage_id/exports', {
    schema: {
      tags,
      summary: 'Export the project (or a version) and write the file to a target storage',
      description: 'The body is the export route\'s; the file is also kept as an export of the project. It is written to '
        + '`{prefix}/exports/{filename}`. 409 for a source storage.',
      params: StorageParams,
      body: ExportRequest,
      response: { 201: StorageWriteOut, ...errors(401, 403, 404, 409, 503) },
    },
  }, async (request, reply) => reply.status(201).send(await storages.exportTo(callerOf(request), request.params.id, request.params.storage_id, request.body)));

  app.post('/api/projects/:id/storages/:storage_id/versions/:version_id', {
    schema: {
      tags,
      summary: 'Write a ready version\'s generated files to a target storage',
      description: 'Written under `{prefix}/versions/v{number}/{split}/…`. 409 for a source storage or a version not ready.',
      params: StorageVersionParams,
      response: { 201: StorageWriteOut, ...errors(401, 403, 404, 409, 503) },
    },
  }, async (request, reply) => reply.status(201).send(await storages.versionTo(callerOf(request), request.params.id, request.params.storage_id, request.params.version_id)));
}
