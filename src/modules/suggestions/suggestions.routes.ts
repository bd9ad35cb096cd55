import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { UnprocessableOut } from '../models/models.schemas.js';
import { PREFETCH_LIMIT, PrefetchOut, PrefetchRequest } from './suggestions.schemas.js';
import type { SuggestionsService } from './suggestions.service.js';

export function suggestionsRoutes(server: FastifyInstance, service: SuggestionsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/projects/:id/suggestions/prefetch', {
    schema: {
      tags: ['auto-annotate'],
      summary: "Predict the images ahead in the annotator's queue, so suggestions wait when they open",
      description: `Up to ${PREFETCH_LIMIT} images; the project's production model predicts those without an accepted annotation `
        + 'or open suggestions from it in a background job (202), writing suggestions (`status: "suggested"`, source `model:<id>`) '
        + 'as auto-annotate does; classes the project lacks are skipped. One job per project at a time: while one is queued or '
        + 'running, or when nothing needs predicting, the answer is 200 and nothing is queued. 409 without a production model.',
      params: IdParams,
      body: PrefetchRequest,
      response: { 200: PrefetchOut, 202: PrefetchOut, ...errors(401, 403, 404, 409), 422: UnprocessableOut },
    },
  }, async (request, reply) => {
    const outcome = await service.prefetch(callerOf(request), request.params.id, request.body);
    return reply.status(outcome.status).send(outcome.body);
  });
}
