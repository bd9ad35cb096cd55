import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { JobsService } from './jobs.service.js';
import { JobOut } from './jobs.schemas.js';

export function jobsRoutes(server: FastifyInstance, jobs: JobsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/jobs/:id', {
    schema: { tags: ['jobs'], summary: 'A background job: status, progress, message, ETA, result or error', params: IdParams, response: { 200: JobOut, ...errors(401, 404, 422) } },
  }, async (request) => jobs.get(callerOf(request), request.params.id));

  app.post('/api/jobs/:id/cancel', {
    schema: {
      tags: ['jobs'],
      summary: 'Cancel a queued or running job',
      description: 'A queued job is cancelled at once. A running job is stopped by the process running it (a training child gets '
        + 'SIGTERM, then SIGKILL) and its partial output is removed; the answer waits up to 15 s for that and shows the job as it '
        + 'then is. 409 when the job has already finished; 403 for read-only members.',
      params: IdParams,
      response: { 200: JobOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => jobs.cancel(callerOf(request), request.params.id));
}
