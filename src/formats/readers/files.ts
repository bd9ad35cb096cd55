import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { headerSize } from '../../imaging/dataset-pixels.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';

/** Names tools and operating systems leave in archives that are never part of a dataset. */
const NOISE = new Set(['__MACOSX', '.DS_Store', 'Thumbs.db']);

export async function listDir(dir: string): Promise<{ files: string[]; dirs: string[] }> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  const dirs: string[] = [];
  for (const entry of entries) {
    if (NOISE.has(entry.name) || entry.name.startsWith('._')) continue;
    if (entry.isDirectory()) dirs.push(entry.name);
    else if (entry.isFile()) files.push(entry.name);
  }
  files.sort();
  dirs.sort();
  return { files, dirs };
}

/** Every regular file under `dir`, as paths relative to it with `/` separators, in sorted order. */
export async function* walk(dir: string, prefix = ''): AsyncGenerator<string> {
  const { files, dirs } = await listDir(join(dir, prefix));
  for (const file of files) yield prefix ? `${prefix}/${file}` : file;
  for (const sub of dirs) yield* walk(dir, prefix ? `${prefix}/${sub}` : sub);
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * An archive often wraps the dataset in one top folder (`my-dataset/train/...`); the dataset root is inside it. A
 * lone split folder (`test/`) is part of the dataset, not a wrapper.
 */
export async function datasetRoot(dir: string): Promise<string> {
  const { files, dirs } = await listDir(dir);
  if (files.length === 0 && dirs.length === 1 && !splitFromName(dirs[0])) return datasetRoot(join(dir, dirs[0]));
  return dir;
}

/** Width and height from the image header (no full decode), honouring EXIF orientation. */
export async function imageSize(path: string): Promise<{ width: number; height: number }> {
  try {
    return await headerSize(path);
  } catch (error) {
    throw new FormatError(`cannot read image ${path.split('/').slice(-2).join('/')}: ${(error as Error).message}`);
  }
}

/** The name an extracted archive's temporary folder starts with (never a dataset's own name). */
export const EXTRACTION_PREFIX = 'versa-import-';
