import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors } from '../../http/schemas.js';
import { PluginListQuery, PluginOut, PluginParams } from './plugins.schemas.js';
import type { PluginsService } from './plugins.service.js';

export function pluginsRoutes(server: FastifyInstance, service: PluginsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['plugins'];

  app.get('/api/plugins', {
    schema: {
      tags,
      summary: 'Every plugin (importers, exporters, preprocessing, augmentation, checks, cleaning, detectors, trainers, pipeline steps)',
      description: 'Third-party plugins from PLUGINS_DIR that failed to load are listed with `status: failed`; admins also get their `error`, '
        + 'with paths relative to PLUGINS_DIR (`null` for other accounts).',
      querystring: PluginListQuery,
      response: { 200: Type.Array(PluginOut), ...errors(401, 422) },
    },
  }, async (request) => service.list(callerOf(request), request.query.plugin_type));

  app.get('/api/plugins/:type/:name', {
    schema: { tags, summary: 'One plugin with the JSON Schema of its parameters', params: PluginParams, response: { 200: PluginOut, ...errors(401, 404, 422) } },
  }, async (request) => {
    callerOf(request);
    return service.get(request.params.type, request.params.name);
  });
}
