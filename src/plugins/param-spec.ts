/**
 * A parameter described once — type, default, range, choices — as the quality checks, cleaning actions and training
 * adapters declare theirs: the same description validates requests, documents the catalogs and becomes the JSON
 * Schema the plugin registry shows.
 */
import type { JsonSchema } from './plugin-registry.js';

/** `D`: what defaults may be (the training adapters' are scalars or null). */
export interface ParamSpec<D = unknown> {
  type: 'integer' | 'number' | 'boolean' | 'string' | 'integer[]';
  default: D;
  min?: number;
  max?: number;
  multipleOf?: number;
  enum?: string[];
  description: string;
}

export type ParamSpecs = Record<string, ParamSpec>;

/** The JSON Schema of a set of parameters (a null default makes the parameter nullable). */
export function paramsSchema(params: ParamSpecs): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, p] of Object.entries(params)) {
    const base: Record<string, unknown> = p.type === 'integer[]' ? { type: 'array', items: { type: 'integer' } } : { type: p.type };
    if (p.default === null) base.type = [base.type, 'null'];
    properties[name] = {
      ...base,
      default: p.default,
      description: p.description,
      ...(p.min !== undefined ? { minimum: p.min } : {}),
      ...(p.max !== undefined ? { maximum: p.max } : {}),
      ...(p.multipleOf !== undefined ? { multipleOf: p.multipleOf } : {}),
      ...(p.enum ? { enum: p.enum } : {}),
    } as JsonSchema;
  }
  return { type: 'object', properties, additionalProperties: false } as JsonSchema;
}
