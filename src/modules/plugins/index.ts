import type { FastifyInstance } from 'fastify';
import type { PluginRegistry } from '../../plugins/plugin-registry.js';
import { pluginsRoutes } from './plugins.routes.js';
import { PluginsService } from './plugins.service.js';

/** The plugin catalog routes over the registry built in the composition root. */
export function registerPluginsModule(app: FastifyInstance, registry: PluginRegistry): void {
  pluginsRoutes(app, new PluginsService(registry));
}
