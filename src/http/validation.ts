import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;
type RouteCompiler = (route: { schema: unknown; httpPart?: string }) => unknown;

/**
 * Request validation with Fastify's own Ajv set-up, twice: query strings, path parameters and headers are text, so
 * their values are coerced to the schema's types ("5" → 5, a lone value → a list); a JSON body already has types and
 * keeps them, so `{"ids": true}` is a 422, not the list [1] (one default instance coerces every part alike).
 */
export function validationOptions(): Pick<FastifyServerOptions, 'ajv' | 'schemaController'> {
  const build = AjvCompiler();
  const buildValidator = ((externalSchemas: Parameters<typeof build>[0], options: { customOptions?: object }) => {
    const text = build(externalSchemas, options) as unknown as RouteCompiler;
    const json = build(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } }) as unknown as RouteCompiler;
    return (route: { schema: unknown; httpPart?: string }) => (route.httpPart === 'body' ? json : text)(route);
  }) as unknown as ValidatorFactory;
  return { ajv: { customOptions: { allErrors: true } }, schemaController: { compilersFactory: { buildValidator } } };
}
