import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { ProfileOut } from './profile.schemas.js';
import type { ProfileService } from './profile.service.js';

export function profileRoutes(server: FastifyInstance, profiles: ProfileService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/projects/:id/profile', {
    schema: {
      tags: ['quality'],
      summary: 'Dataset profile',
      description:
        'Counts per split and class, instances per class and split, annotations per image, image sizes and aspect ratios, ' +
        'COCO box sizes and a 10×10 heat map of box centres (bbox annotations). A project with samples also gets `samples`: ' +
        'counts per modality and split, classes per split, text lengths (text and LLM records) and, for tabular samples, each ' +
        'column\'s type, missing and distinct values, numeric range and mean or most frequent values. `modality` is the one most ' +
        'records have. Counts are SQL aggregates; lengths and columns are read in keyset pages. Needs `project.read`; ' +
        'an annotator kept to their assignments (`assigned_only` projects) gets 403: it covers the whole project.',
      params: IdParams,
      response: { 200: ProfileOut, ...errors(401, 403, 404, 422) },
    },
  }, async (request) => profiles.profile(callerOf(request), request.params.id));
}
