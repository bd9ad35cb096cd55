import type { paths } from './api-types.js';

// Types of the API's routes, read from the generated `paths` (api-types.ts, generated from the server's OpenAPI
// document by scripts/api-types.ts and checked by `npm run typecheck`): a server schema change that breaks a caller
// fails the type check.

export type { paths, operations, components } from './api-types.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** The routes that answer a method. */
export type PathWith<M extends Method> = { [P in keyof paths]: paths[P] extends Record<M, object> ? P : never }[keyof paths];
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type Success<R> = JsonOf<R[Extract<keyof R, 200 | 201 | 202>]>;
/** The JSON body of a route's success responses (200, 201, 202: a union where a route answers more than one). */
export type ResponseOf<P extends keyof paths, M extends Method> = Success<Operation<P, M> extends { responses: infer R } ? R : never>;
/** The JSON request body of a route. */
export type RequestOf<P extends keyof paths, M extends Method> = JsonOf<NonNullable<Operation<P, M> extends { requestBody?: infer B } ? B : never>>;
/** A route's path parameters (never when it has none). */
export type PathParamsOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { path: infer T } } ? T : never;
/** A route's query parameters. */
export type QueryOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { query?: infer T } } ? T : never;
/** An item of a list answer (or of an `{items: [...]}` answer). */
export type Item<T> = T extends readonly (infer I)[] ? I : T extends { items: readonly (infer J)[] } ? J : never;
