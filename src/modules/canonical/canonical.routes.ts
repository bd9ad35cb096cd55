import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { CanonicalQuery, CanonicalRecord } from './canonical.schemas.js';
import type { CanonicalService } from './canonical.service.js';

export function canonicalRoutes(server: FastifyInstance, canonical: CanonicalService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/projects/:id/canonical', {
    schema: {
      tags: ['quality'],
      summary: 'Canonical export: the universal record schema',
      description:
        'One `CanonicalRecord` per image, then one per sample: `{id, modality, split, media, annotations, label, spans, value, ' +
        'metadata}`, the form other tools and pipelines read without knowing Versa\'s tables. A sample\'s `media` is its file ' +
        '(audio, video: `uri` of `GET /api/samples/{id}/file`) or its content (`{text}`, `{row}`, `{prompt, response, …}`); ' +
        'time segments are `annotations` of type `segment`. Image annotations carry every shape type, their `attributes` and ' +
        '`group_id`; the classes they name by `class_id`, with keypoint skeletons and attribute specs, are ' +
        '`GET /api/projects/{id}/classes`. `?split=` keeps one split of both. Streams ' +
        'JSON Lines (`application/x-ndjson`, one record per line) straight from the database; `?format=json` streams one ' +
        'JSON array instead. Needs the `export` permission (every role); an annotator kept to their assignments ' +
        '(`assigned_only` projects) gets 403, as for `POST /api/projects/{id}/export`.',
      params: IdParams,
      querystring: CanonicalQuery,
      response: {
        200: {
          description: 'The records: images in id order, then samples in id order',
          content: {
            'application/x-ndjson': { schema: CanonicalRecord },
            'application/json': { schema: Type.Array(CanonicalRecord) },
          },
        },
        ...errors(401, 403, 404, 422),
      },
    },
  }, async (request, reply) => {
    const out = await canonical.stream(callerOf(request), request.params.id, request.query);
    reply.header('content-type', out.contentType).header('cache-control', 'private, no-store');
    // The body is a stream of the documented records; the type provider only knows object bodies.
    return reply.send(out.body as never);
  });
}
