import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { ReadinessBody, ReadinessOut } from './quality.schemas.js';
import type { ReadinessEvaluator } from './readiness.js';

export interface QualityServices {
  readonly readiness: ReadinessEvaluator;
}

export function qualityRoutes(server: FastifyInstance, services: QualityServices): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['quality'];

  app.post('/api/projects/:id/readiness', {
    schema: {
      tags,
      summary: 'Training readiness for an adapter',
      description:
        'A score 0–100 made of weighted checks (each passed or failed, with a message) and the blockers: failed checks that ' +
        'make training pointless whatever the score (a detector without boxes or without a valid split, a classifier with ' +
        'fewer than `min_images_per_class` images in a class). `ready` is no blockers and score ≥ threshold ' +
        '(`config.min_readiness_score`, default 60). The training gate uses exactly this. Reads only; needs `project.read`.',
      params: IdParams,
      body: ReadinessBody,
      response: { 200: ReadinessOut, ...errors(401, 404, 422) },
    },
  }, async (request) => services.readiness.evaluate(callerOf(request), request.params.id, request.body ?? {}));
}
