import type { FastifyRequest } from 'fastify';
import { BadRequestError, ValidationError } from '../../http/errors.js';
import { multipartFiles } from '../../http/multipart.js';
import type { IncomingFile } from './images.service.js';

const FIELD = 'files';
// The counts the multipart plugin (app.ts) allows the other upload routes.
const LIMITS = { files: 1000, fields: 50, parts: 1100 };

/**
 * The file parts named `files` of a multipart request, in order, each read whole and hashed as it arrives (one pass,
 * one copy). Other parts are skipped; a file over `maxFileBytes` comes truncated and empty. Nothing is read until the
 * consumer iterates, so access is checked first.
 */
export async function* uploadedFiles(request: FastifyRequest, maxFileBytes: number): AsyncGenerator<IncomingFile> {
  if (!request.isMultipart()) {
    throw ValidationError.at(['body', FIELD], 'Expected a multipart/form-data body with one or more parts named "files"', 'missing');
  }
  // Not destroyed when parsing stops early, so that the error reply still reaches the client.
  const body = request.raw.iterator({ destroyOnReturn: false });
  try {
    const options = { field: FIELD, limits: { ...LIMITS, fileSize: maxFileBytes } };
    for await (const file of multipartFiles(body, request.headers['content-type'], options)) {
      yield { originalName: file.filename, bytes: file.bytes, sha256: file.sha256, truncated: file.truncated };
    }
  } catch (err) {
    // The limits' errors carry a status; the others (the parser's, a closed connection's) mean a malformed body.
    if ((err as { statusCode?: number }).statusCode) throw err;
    throw new BadRequestError(`Malformed multipart body: ${(err as Error).message}`);
  } finally {
    // What is left of a refused body is read and dropped, so the connection can serve another request.
    request.raw.resume();
  }
}
