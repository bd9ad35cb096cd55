import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../../http/errors.js';
import type { StreamedFile } from '../../http/multipart.js';
import { FORM_LIMITS, isMultipart, readMultipartRequest } from '../../http/multipart-request.js';

/**
 * Reads a model upload: hands each file part to `onFile` as a stream, which `onFile` reads (or leaves, to skip the
 * part) before the parse moves on, and returns the text fields by name.
 */
export type UploadForm = (onFile: (file: StreamedFile) => Promise<void>) => Promise<Record<string, string>>;

/**
 * A multipart model upload, with the model's own size limit (weights are larger than images). Nothing is read until
 * the form is read, so access is checked first.
 */
export function modelUploadForm(request: FastifyRequest, maxBytes: number): UploadForm {
  return async (onFile) => {
    if (!isMultipart(request)) {
      throw ValidationError.at(['body', 'file'], 'Expected a multipart/form-data body with a file part named "file"', 'missing');
    }
    const fileTooLarge = `The model file is larger than the ${Math.round(maxBytes / 1024 / 1024)} MiB limit (MAX_MODEL_UPLOAD_MB)`;
    return readMultipartRequest(request, { limits: { ...FORM_LIMITS, fileSize: maxBytes, files: 1 }, fileTooLarge }, onFile);
  };
}
