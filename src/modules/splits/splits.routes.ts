import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { SplitCountsOut, SplitQuery, SplitResultOut } from './splits.schemas.js';
import type { SplitsService } from './splits.service.js';

export function splitsRoutes(server: FastifyInstance, splits: SplitsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['splits'];

  app.get('/api/projects/:id/splits', {
    schema: { tags, summary: 'Image counts per split', params: IdParams, response: { 200: SplitCountsOut, ...errors(401, 404, 422) } },
  }, async (request) => splits.counts(callerOf(request), request.params.id));

  app.post('/api/projects/:id/splits', {
    schema: {
      tags,
      summary: 'Reassign every image to train / valid / test',
      description:
        'Percentages are integers adding up to 100 (else 422). The same seed over the same images gives the same split; ' +
        'the seed used is in the answer. Rows are written 1,000 per transaction. Needs the `versions.write` permission. ' +
        'When another user holds an editing lock on any image of the project: 409 naming the images and holders in ' +
        '`locks`, and nothing changes.',
      params: IdParams,
      querystring: SplitQuery,
      response: { 200: SplitResultOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => splits.split(callerOf(request), request.params.id, request.query));
}
