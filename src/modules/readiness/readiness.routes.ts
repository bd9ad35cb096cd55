import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { ReadinessOut } from '../../training/readiness.js';
import { ReadinessBody } from './readiness.schemas.js';
import type { ReadinessEvaluator } from './readiness.service.js';

export function readinessRoutes(server: FastifyInstance, readiness: ReadinessEvaluator): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/projects/:id/readiness', {
    schema: {
      tags: ['quality'],
      summary: 'Training readiness for an adapter',
      description:
        'A score 0–100 made of weighted checks (each passed or failed, with a message) and the blockers: failed checks that ' +
        'make training pointless whatever the score (every adapter: fewer than 50% of images or samples annotated; a detector ' +
        'without boxes or without a valid split, a class with fewer than 5 instances in train (or `min_instances_per_class` ' +
        'when lower) or a trained class missing from valid; a classifier with fewer than `min_images_per_class` images in a ' +
        'class, an empty valid split or a class missing from it; for the sample adapters `tabular` and `text`: no samples of ' +
        'their modality, no target column or labels, one class only or fewer than `min_samples_per_class` samples in one, a ' +
        'regression target without numbers, an empty train or valid split while others are assigned). `ready` is no blockers and score ≥ threshold ' +
        '(`config.min_readiness_score`, default 60). The training gate uses exactly this. Reads only; needs `project.read`; ' +
        'an annotator kept to their assignments (`assigned_only` projects) gets 403: it covers the whole project.',
      params: IdParams,
      body: ReadinessBody,
      response: { 200: ReadinessOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => readiness.evaluate(callerOf(request), request.params.id, request.body ?? {}));
}
