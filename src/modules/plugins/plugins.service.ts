import type { Caller } from '../../access/caller.js';
import { NotFoundError } from '../../http/errors.js';
import type { Plugin, PluginFailure, PluginRegistry, PluginType } from '../../plugins/plugin-registry.js';
import type { PluginOut } from './plugins.schemas.js';

/**
 * The plugin catalog as the API shows it: every registered plugin, then the third-party ones that failed to load.
 * Why one failed is the operator's business: admins see the error, other accounts only that it failed.
 */
export class PluginsService {
  constructor(private readonly registry: PluginRegistry) {}

  list(caller: Caller, type?: PluginType): PluginOut[] {
    return [...this.registry.list(type).map(pluginOut), ...this.registry.failures(type).map((f) => failureOut(f, caller.isAdmin))];
  }

  get(type: PluginType, name: string): PluginOut {
    const plugin = this.registry.get(type, name);
    if (!plugin) throw new NotFoundError(`No ${type} plugin named '${name}'`);
    return pluginOut(plugin);
  }
}

function pluginOut(p: Plugin): PluginOut {
  return { type: p.type, name: p.name, title: p.title, description: p.description, version: p.version, builtin: p.builtin, config_schema: p.config_schema, status: 'loaded', error: null, source: p.source ?? null };
}

function failureOut(f: PluginFailure, withError: boolean): PluginOut {
  return {
    type: f.type ?? 'unknown',
    name: f.name ?? f.source,
    title: f.name ?? f.source,
    description: '',
    version: f.version ?? '',
    builtin: false,
    config_schema: {},
    status: 'failed',
    error: withError ? f.error : null,
    source: f.source,
  };
}
