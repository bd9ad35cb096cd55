import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../../http/errors.js';
import { FORM_LIMITS, isMultipart, readMultipartRequest } from '../../http/multipart-request.js';

/** An import's data file spooled to a private temporary folder, with the request's text parts. */
export interface SampleUpload {
  readonly dir: string;
  /** The file, under a fixed name (the client's name never reaches the file system). */
  readonly path: string;
  readonly originalName: string;
  readonly fields: Record<string, string>;
  cleanup(): Promise<void>;
}

/** Reads a multipart import request: the part `file` (at most `maxBytes`, more is 413) goes to disk. */
export async function readSampleUpload(request: FastifyRequest, workDir: string, maxBytes: number): Promise<SampleUpload> {
  if (!isMultipart(request)) throw ValidationError.at(['body', 'file'], 'Expected a multipart/form-data body with the data in a part named "file"', 'missing');
  await mkdir(workDir, { recursive: true });
  const dir = await mkdtemp(join(workDir, 'samples-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, 'upload.bin');
  let originalName: string | null = null;
  try {
    const fields = await readMultipartRequest(request, { limits: { ...FORM_LIMITS, fileSize: maxBytes, files: 1 }, fileTooLarge: 'file too large' }, async (file) => {
      if (file.name !== 'file' || originalName !== null) {
        file.stream.resume();
        return;
      }
      originalName = file.filename;
      await pipeline(file.stream, createWriteStream(path));
    });
    if (originalName === null) throw ValidationError.at(['body', 'file'], 'Field required: the data in a part named "file"', 'missing');
    return { dir, path, originalName, fields, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
