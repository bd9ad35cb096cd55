import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticateRequest, callerOf, type Authenticator } from '../../http/authenticate.js';
import { ForbiddenError } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import type { PlatformService } from './platform.service.js';

const StatsOut = Type.Object({
  project_count: Type.Integer(),
  total_images: Type.Integer(),
  annotated_images: Type.Integer(),
  total_annotations: Type.Integer(),
  total_samples: Type.Integer({ description: 'Text, tabular, audio, video and LLM samples' }),
  labelled_samples: Type.Integer(),
});

const ReadyOut = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Record(Type.String(), Type.String()),
});

export function platformRoutes(server: FastifyInstance, platform: PlatformService, auth: Authenticator): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['platform'];

  app.get('/api/health', {
    config: { public: true },
    schema: { tags, summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok'), version: Type.String() }) } },
  }, async () => ({ status: 'ok' as const, version: platform.version }));

  app.get('/api/ready', {
    config: { public: true },
    schema: { tags, summary: 'Readiness of the database and, when configured, Redis', response: { 200: ReadyOut, 503: ReadyOut } },
  }, async (_request, reply) => {
    const report = await platform.readiness();
    return reply.status(report.status === 'ready' ? 200 : 503).send(report);
  });

  app.get('/api/stats', {
    schema: { tags, summary: 'Counts over the projects you can see', response: { 200: StatsOut, ...errors(401) } },
  }, async (request) => platform.stats(callerOf(request)));

  // Outside /api (where scrapers look), so the route checks its callers itself: the METRICS_TOKEN bearer, or a platform admin.
  app.get('/metrics', {
    schema: {
      tags,
      summary: 'Prometheus metrics of this process (text exposition format)',
      description: 'For the `METRICS_TOKEN` bearer (a Prometheus scraper) or a platform admin; anyone else is 401, or 403 when signed in.',
      response: { 200: { description: 'Prometheus text format', content: { 'text/plain': { schema: Type.String() } } }, ...errors(401, 403) },
    },
    onRequest: async (request) => {
      const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
      if (bearer && platform.isMetricsToken(bearer[1])) return;
      await authenticateRequest(request, auth);
      if (!callerOf(request).isAdmin) throw new ForbiddenError('Metrics are for platform admins and the METRICS_TOKEN scraper');
    },
  }, async (_request, reply) => reply.type(platform.metrics.contentType).send(await platform.metrics.text()));
}
