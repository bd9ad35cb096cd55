import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { PageQuery, sendPage } from '../../http/pagination.js';
import { errors, IdParams } from '../../http/schemas.js';
import { ImageParams } from '../../http/schemas.js';
import type { RevisionsService } from './revisions.service.js';
import { RevertBody, RevisionOut } from './revisions.schemas.js';

export function revisionsRoutes(server: FastifyInstance, revisions: RevisionsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['revisions'];
  const paging = 'Oldest first; paged with `limit` and `offset` or `after`, the total in `X-Total-Count`.';

  app.get('/api/annotations/:id/revisions', {
    schema: {
      tags,
      summary: "An annotation's history (also after it was deleted)",
      description: paging,
      params: IdParams,
      querystring: PageQuery,
      response: { 200: Type.Array(RevisionOut), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => sendPage(request, reply, await revisions.forAnnotation(callerOf(request), request.params.id, request.query), request.query.limit));

  app.get('/api/images/:image_id/revisions', {
    schema: {
      tags,
      summary: 'The history of every annotation of an image',
      description: paging,
      params: ImageParams,
      querystring: PageQuery,
      response: { 200: Type.Array(RevisionOut), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => sendPage(request, reply, await revisions.forImage(callerOf(request), request.params.image_id, request.query), request.query.limit));

  app.post('/api/annotations/:id/revert', {
    schema: {
      tags,
      summary: 'Revert an annotation to a revision',
      description: 'Restores the state right after `revision_id` and records it as a new `revert` revision, which is answered. '
        + 'A deleted annotation is recreated under its id; a revision that deleted it deletes it again (409 when already deleted). '
        + 'A revision of another annotation is 404; a class deleted since is 409; a lock held by another user is 409.',
      params: IdParams,
      body: RevertBody,
      response: { 201: RevisionOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await revisions.revert(callerOf(request), request.params.id, request.body.revision_id)));
}
