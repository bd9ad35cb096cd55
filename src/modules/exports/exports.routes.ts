import { opened } from '../../http/opened-stream.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { BinaryResponse, errors, IdParams } from '../../http/schemas.js';
import { WRITERS } from '../../formats/writers/index.js';
import type { ExportsService } from './exports.service.js';
import { ExportFileParams, ExportOut, ExportRequest } from './exports.schemas.js';

/** What a download may be: any writer's file, or (adapters' prepared files) plain bytes. */
const DOWNLOAD_MEDIA_TYPES = [...new Set(['application/zip', ...Object.values(WRITERS).map((w) => w.contentType), 'application/octet-stream'])];

export function exportsRoutes(server: FastifyInstance, exports: ExportsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['export'];

  app.post('/api/projects/:id/export', {
    schema: {
      tags,
      summary: 'Export the project, or one of its versions, as a file',
      description: 'Writes the file (streamed from the database, never held in memory) and answers its reference once it '
        + 'is stored; download it from `url`. With `version_id` the version\'s generated images are exported (the version '
        + 'must be ready, else 409). A dataset the format cannot hold (e.g. more than 255 classes as PNG masks) is 422.',
      params: IdParams,
      body: ExportRequest,
      response: { 200: ExportOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => exports.export(callerOf(request), request.params.id, request.body));

  app.get('/api/exports/:filename', {
    schema: {
      tags,
      summary: 'Download an export file',
      description: 'Only names the export route created, and only to callers who may read their project; any other name is 404.',
      params: ExportFileParams,
      response: { 200: BinaryResponse('The export file, in its format\'s media type', DOWNLOAD_MEDIA_TYPES), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => {
    const file = await exports.file(callerOf(request), request.params.filename);
    const stream = await opened(file.open());
    reply
      .header('content-type', file.contentType)
      .header('content-length', String(file.size))
      .header('content-disposition', `attachment; filename="${file.filename}"`)
      .header('cache-control', 'private, no-store');
    return reply.send(stream);
  });
}
