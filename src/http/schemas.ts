import { Type, type TSchema } from 'typebox';

export const ErrorOut = Type.Object({ detail: Type.String() }, { additionalProperties: true });
export const ValidationErrorOut = Type.Object({
  detail: Type.Array(
    Type.Object({ loc: Type.Array(Type.Union([Type.String(), Type.Integer()])), msg: Type.String(), type: Type.String() }),
  ),
});

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request',
  401: 'Not authenticated',
  403: 'Not allowed for your role',
  404: 'Not found, or not visible to you',
  409: 'Conflicts with the current state',
  413: 'Too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  503: 'Temporarily unavailable',
};

/** Response schemas for the error statuses a route can answer (401 and 422 are added to every protected route). */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) {
    out[status] = status === 422 ? ValidationErrorOut : Type.Object({ detail: Type.String() }, { description: ERROR_DESCRIPTIONS[status], additionalProperties: true });
  }
  return out;
}

/**
 * A response of raw bytes (a file download) under the media types it may carry: generators read it as a file (a Blob,
 * bytes), not JSON. `format: binary` is OpenAPI 3.0's spelling of "the body is the bytes".
 */
export function BinaryResponse(description: string, mediaTypes: readonly string[]) {
  return { description, content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])) };
}

/** A response of text in one media type (YAML, CSV), which clients read as a string. */
export function TextResponse(description: string, mediaType: string) {
  return { description, content: { [mediaType]: { schema: { type: 'string' } } } };
}

export const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/** Path parameters of routes on one image (images, locks, revisions). */
export const ImageParams = Type.Object({ image_id: Id });
export const IdParams = Type.Object({ id: Id });
export const Timestamp = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A string enum that shows as `enum` in OpenAPI and types as the literal union. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
