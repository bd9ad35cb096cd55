import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors } from '../../http/schemas.js';
import { ImageParams } from '../../http/schemas.js';
import type { ImageWorkflow } from './lock-guard.service.js';
import { LockOrNull, LockOut, LockReleaseQuery } from './locks.schemas.js';

export function locksRoutes(server: FastifyInstance, locks: ImageWorkflow): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['locks'];

  app.get('/api/images/:image_id/lock', {
    schema: { tags, summary: "An image's editing lock, or null", params: ImageParams, response: { 200: LockOrNull, ...errors(401, 404, 422) } },
  }, async (request) => locks.getLock(callerOf(request), request.params.image_id));

  app.post('/api/images/:image_id/lock', {
    schema: {
      tags,
      summary: 'Take or renew the editing lock of an image',
      description: 'A lock lasts 60 seconds; its holder renews it by posting again. While it holds, other users\' writes to the image '
        + '(annotations, reverts, SAM saves, split changes, deletes) answer 409 naming the holder and expiry; bulk writes that touch it '
        + '(image bulk delete, re-splitting the project, a cascading class delete) are refused whole with `locks`; a detector run '
        + 'skips it and reports it in `locked`. Held by someone else: 409 with `lock`. An image you cannot see (or, in '
        + 'assigned-only projects, one not assigned to you as annotator) is 404.',
      params: ImageParams,
      response: { 200: LockOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => locks.acquireLock(callerOf(request), request.params.image_id));

  app.delete('/api/images/:image_id/lock', {
    schema: {
      tags,
      summary: 'Release your lock, or break anyone\'s with force=true (project admins)',
      params: ImageParams,
      querystring: LockReleaseQuery,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    await locks.releaseLock(callerOf(request), request.params.image_id, request.query.force ?? false);
    return reply.status(204).send(null);
  });
}
