import { finished } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { BadRequestError, PayloadTooLargeError, ValidationError } from '../../http/errors.js';

export type UploadPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; stream: Readable };

/**
 * The parts of a multipart model upload in order, with the model's own size limit (weights are larger than
 * images). A file part must be consumed (or drained with `skip`) before the next part arrives. Nothing is read
 * until the consumer iterates, so access is checked first.
 */
export async function* modelUploadParts(request: FastifyRequest, maxBytes: number): AsyncGenerator<UploadPart> {
  if (!request.isMultipart()) {
    throw ValidationError.at(['body', 'file'], 'Expected a multipart/form-data body with a file part named "file"', 'missing');
  }
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 1 } })) {
      if (part.type === 'file') yield { kind: 'file', name: part.fieldname, filename: part.filename ?? '', stream: part.file };
      else yield { kind: 'field', name: part.fieldname, value: String(part.value) };
    }
  } catch (err) {
    const { statusCode: status, code } = err as { statusCode?: number; code?: string };
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new PayloadTooLargeError(`The model file is larger than the ${Math.round(maxBytes / 1024 / 1024)} MiB limit (MAX_MODEL_UPLOAD_MB)`);
    if (status) throw err;
    throw new BadRequestError(`Malformed multipart body: ${(err as Error).message}`);
  }
}

/** Reads a part the upload does not use, so the parser can move on. */
export async function skip(stream: Readable): Promise<void> {
  stream.resume();
  await finished(stream);
}
