import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isMultipartFormData, readMultipart, type StreamedFile, type StreamOptions } from './multipart.js';

/** The counts every multipart route allows per body, and the bytes per text field. */
export const FORM_LIMITS = { files: 1000, fields: 50, fieldSize: 1024 * 1024, parts: 1100 };

/** Fastify leaves multipart bodies unread: the routes that take them stream them through `multipart.ts`. */
export function registerMultipartBodies(app: FastifyInstance): void {
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
}

export function isMultipart(request: FastifyRequest): boolean {
  return isMultipartFormData(request.headers['content-type']);
}

/** A request's body for the parser, not destroyed when parsing stops early, so that the error reply still reaches the client. */
export function requestBody(request: FastifyRequest): AsyncIterable<Buffer> {
  return request.raw.iterator({ destroyOnReturn: false });
}

/** `readMultipart` on a request; what is left of a refused body is read and dropped, so the connection can serve another request. */
export async function readMultipartRequest(request: FastifyRequest, options: StreamOptions, onFile: (file: StreamedFile) => Promise<void>): Promise<Record<string, string>> {
  try {
    return await readMultipart(requestBody(request), request.headers['content-type'], options, onFile);
  } finally {
    request.raw.resume();
  }
}
