import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { READABLE_FORMATS } from '../../formats/readers/index.js';
import { ValidationError } from '../../http/errors.js';
import { textProblem } from '../../http/input-guard.js';
import { FORM_LIMITS, isMultipart, readMultipartRequest } from '../../http/multipart-request.js';
import { PROJECT_TYPES } from '../projects/projects.schemas.js';
import { NEW_CLASSES, ON_CONFLICT, type ImportIntoOptions, type ImportOptions } from './imports.schemas.js';

export interface UploadedArchive<O = ImportOptions> {
  /** The archive, spooled to disk (an upload can be far larger than memory). */
  readonly path: string;
  readonly originalName: string;
  readonly options: O;
  /** Removes the spooled archive. */
  cleanup(): Promise<void>;
}

const FILE_FIELD = 'file';

type Issue = { loc: string[]; msg: string; type: string };

/**
 * Reads an import request: the part named `file` goes to a temporary file under `workDir` (at most `maxBytes`; more
 * is 413), the text parts (`name`, `project_type` and `format` by default; `parse` decides) are checked like a JSON
 * body would be (422).
 */
export async function readImportUpload<O = ImportOptions>(
  request: FastifyRequest,
  workDir: string,
  maxBytes: number,
  parse: (fields: Record<string, string>) => O = parseFields as (fields: Record<string, string>) => O,
): Promise<UploadedArchive<O>> {
  if (!isMultipart(request)) {
    throw ValidationError.at(['body', FILE_FIELD], 'Expected a multipart/form-data body with the archive in a part named "file"', 'missing');
  }
  await mkdir(workDir, { recursive: true });
  const dir = await mkdtemp(join(workDir, 'upload-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  let originalName: string | null = null;
  const path = join(dir, 'archive.zip');
  try {
    const limits = { ...FORM_LIMITS, fileSize: maxBytes, files: 1 };
    const fields = await readMultipartRequest(request, { limits, fileTooLarge: 'request file too large' }, async (file) => {
      if (file.name !== FILE_FIELD || originalName !== null) return;
      originalName = file.filename;
      await pipeline(file.stream, createWriteStream(path));
    });
    const archiveName = originalName as string | null;
    if (archiveName === null) throw ValidationError.at(['body', FILE_FIELD], 'Field required: the archive in a part named "file"', 'missing');
    return { path, originalName: archiveName, options: parse(fields), cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function parseFields(fields: Record<string, string>): ImportOptions {
  const options: ImportOptions = {};
  const issues: Issue[] = [];
  if (fields.name !== undefined) {
    const name = fields.name.trim();
    const problem = textProblem(name, true);
    if (!name || name.length > 200) issues.push({ loc: ['body', 'name'], msg: 'must be 1 to 200 characters, not only spaces', type: 'value_error' });
    else if (problem) issues.push({ loc: ['body', 'name'], msg: problem, type: 'value_error' });
    else options.name = name;
  }
  if (fields.project_type !== undefined && fields.project_type !== '') {
    if (!(PROJECT_TYPES as readonly string[]).includes(fields.project_type)) {
      issues.push({ loc: ['body', 'project_type'], msg: `must be one of ${PROJECT_TYPES.join(', ')}`, type: 'enum' });
    } else options.project_type = fields.project_type as ImportOptions['project_type'];
  }
  options.format = formatField(fields, issues);
  options.strict = strictField(fields, issues);
  if (issues.length > 0) throw new ValidationError(issues);
  return options;
}

/** The text parts of an import into an existing project: `format` and `new_classes`. */
export function parseIntoFields(fields: Record<string, string>): ImportIntoOptions {
  const issues: Issue[] = [];
  const options: ImportIntoOptions = { format: formatField(fields, issues), strict: strictField(fields, issues) };
  if (fields.on_conflict !== undefined && fields.on_conflict !== '') {
    if (!(ON_CONFLICT as readonly string[]).includes(fields.on_conflict)) {
      issues.push({ loc: ['body', 'on_conflict'], msg: `must be one of ${ON_CONFLICT.join(', ')}`, type: 'enum' });
    } else options.on_conflict = fields.on_conflict as ImportIntoOptions['on_conflict'];
  }
  if (fields.new_classes !== undefined && fields.new_classes !== '') {
    if (!(NEW_CLASSES as readonly string[]).includes(fields.new_classes)) {
      issues.push({ loc: ['body', 'new_classes'], msg: `must be one of ${NEW_CLASSES.join(', ')}`, type: 'enum' });
    } else options.new_classes = fields.new_classes as ImportIntoOptions['new_classes'];
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return options;
}

/** `strict`: `true` or `false` (absent or empty: false). */
function strictField(fields: Record<string, string>, issues: Issue[]): boolean | undefined {
  const value = fields.strict;
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  issues.push({ loc: ['body', 'strict'], msg: 'must be true or false', type: 'bool_parsing' });
  return undefined;
}

function formatField(fields: Record<string, string>, issues: Issue[]): ImportOptions['format'] {
  if (fields.format === undefined || fields.format === '') return undefined;
  if ((READABLE_FORMATS as readonly string[]).includes(fields.format)) return fields.format as ImportOptions['format'];
  issues.push({ loc: ['body', 'format'], msg: `must be one of ${READABLE_FORMATS.join(', ')}`, type: 'enum' });
  return undefined;
}
