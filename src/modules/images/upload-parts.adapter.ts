import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../../http/errors.js';
import { multipartError, multipartFiles } from '../../http/multipart.js';
import { FORM_LIMITS, isMultipart, requestBody } from '../../http/multipart-request.js';
import type { IncomingFile } from './images.service.js';

const FIELD = 'files';

/**
 * The file parts named `files` of a multipart request, in order, each read whole and hashed as it arrives (one pass,
 * one copy). Other parts are skipped; a file over `maxFileBytes` comes truncated and empty. Nothing is read until the
 * consumer iterates, so access is checked first.
 */
export async function* uploadedFiles(request: FastifyRequest, maxFileBytes: number): AsyncGenerator<IncomingFile> {
  if (!isMultipart(request)) {
    throw ValidationError.at(['body', FIELD], 'Expected a multipart/form-data body with one or more parts named "files"', 'missing');
  }
  try {
    const options = { field: FIELD, limits: { ...FORM_LIMITS, fileSize: maxFileBytes } };
    for await (const file of multipartFiles(requestBody(request), request.headers['content-type'], options)) {
      yield { originalName: file.filename, bytes: file.bytes, sha256: file.sha256, truncated: file.truncated };
    }
  } catch (err) {
    throw multipartError(err);
  } finally {
    // What is left of a refused body is read and dropped, so the connection can serve another request.
    request.raw.resume();
  }
}
