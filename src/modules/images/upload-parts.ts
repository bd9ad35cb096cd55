import { createHash } from 'node:crypto';
import { finished } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import type { FastifyMultipartBaseOptions } from '@fastify/multipart';
import { BadRequestError, ValidationError } from '../../http/errors.js';
import type { IncomingFile } from './images.service.js';

const FIELD = 'files';
// A file over the size limit is reported as that file's outcome, not as a failure of the whole request.
const PARTS_OPTIONS: FastifyMultipartBaseOptions = { throwFileSizeLimit: false };

/**
 * The file parts named `files` of a multipart request, in order, each read whole and hashed as it arrives (one pass,
 * one copy). Other parts are skipped. Nothing is read until the consumer iterates, so access is checked first.
 */
export async function* uploadedFiles(request: FastifyRequest): AsyncGenerator<IncomingFile> {
  if (!request.isMultipart()) {
    throw ValidationError.at(['body', FIELD], 'Expected a multipart/form-data body with one or more parts named "files"', 'missing');
  }
  try {
    yield* readParts(request);
  } catch (err) {
    // The multipart plugin's own errors (too many parts, …) carry a status; the parser's do not: the body is malformed.
    if ((err as { statusCode?: number }).statusCode) throw err;
    throw new BadRequestError(`Malformed multipart body: ${(err as Error).message}`);
  }
}

async function* readParts(request: FastifyRequest): AsyncGenerator<IncomingFile> {
  for await (const part of request.parts(PARTS_OPTIONS as Parameters<FastifyRequest['parts']>[0])) {
    if (part.type !== 'file') continue;
    if (part.fieldname !== FIELD) {
      part.file.resume();
      await finished(part.file);
      continue;
    }
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      if (part.file.truncated) continue;
      hash.update(chunk);
      chunks.push(chunk);
      length += chunk.length;
    }
    const truncated = part.file.truncated;
    yield {
      originalName: part.filename ?? '',
      bytes: truncated ? Buffer.alloc(0) : Buffer.concat(chunks, length),
      sha256: hash.digest('hex'),
      truncated,
    };
  }
}
