import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../lib/metrics.js';

/** Times every answered request under its route's pattern (never the URL asked for, which would label each id apart). */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.request(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
}
