import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { JobsService } from './jobs.service.js';
import { JobOut } from './jobs.schemas.js';

export function jobsRoutes(server: FastifyInstance, jobs: JobsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/jobs/:id', {
    schema: { tags: ['jobs'], summary: 'A background job: status, progress, result or error', params: IdParams, response: { 200: JobOut, ...errors(401, 404, 422) } },
  }, async (request) => jobs.get(callerOf(request), request.params.id));
}
