import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { UnprocessableOut } from '../models/models.schemas.js';
import type { NextToLabelService } from './next-to-label.service.js';
import { NextToLabelOut, NextToLabelQuery } from './next-to-label.schemas.js';

export function nextToLabelRoutes(server: FastifyInstance, service: NextToLabelService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/projects/:id/next-to-label', {
    schema: {
      tags: ['active learning'],
      summary: 'The unlabelled images to label next',
      description: 'Ranks the images without an accepted annotation (an annotator kept to their assignments: their assigned ones) by the '
        + 'production model\'s uncertainty (`least_confidence`, `margin`, `entropy`; a detector scores an image by its least certain '
        + 'detection over the classes and background, and an image where it finds nothing as 1), by `diversity` (greedy k-centre on '
        + 'the model\'s view of each image: per class, its highest score in each cell of a 3 × 3 grid), or at `random` (seeded). '
        + '`model_id` ranks with another model the caller may read. What a model says about an image is cached by the weights\' '
        + 'and the image\'s hashes, so paging (`offset`) does not run it again. No production model and a model strategy: 409.',
      params: IdParams,
      querystring: NextToLabelQuery,
      response: { 200: NextToLabelOut, ...errors(401, 404, 409, 503), 422: UnprocessableOut },
    },
  }, async (request) => service.rank(callerOf(request), request.params.id, request.query));
}
