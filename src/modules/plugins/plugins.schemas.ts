import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { PLUGIN_TYPES } from '../../plugins/plugin-registry.js';

export const PluginOut = Type.Object({
  type: Type.String({ description: `One of ${PLUGIN_TYPES.join(', ')}` }),
  name: Type.String(),
  title: Type.String(),
  description: Type.String(),
  version: Type.String(),
  builtin: Type.Boolean(),
  config_schema: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the parameters' }),
  status: StringEnum(['loaded', 'failed'] as const),
  error: Nullable(Type.String({ description: 'Why a third-party plugin failed to load (admins only; paths relative to PLUGINS_DIR)' })),
  source: Nullable(Type.String({ description: 'The file in PLUGINS_DIR a third-party plugin came from' })),
});
export type PluginOut = Static<typeof PluginOut>;

export const PluginListQuery = Type.Object({ plugin_type: Type.Optional(StringEnum(PLUGIN_TYPES)) });
export const PluginParams = Type.Object({ type: StringEnum(PLUGIN_TYPES), name: Type.String({ minLength: 1, maxLength: 100 }) });
