import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatasetSource, FormatName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { safeExtractZip, type ZipLimits } from '../zip/safe-extract.js';
import { DEFAULT_DATASET_LIMITS, type DatasetLimits } from './coco-reader.js';
import { datasetRoot, EXTRACTION_PREFIX, isDirectory } from './files.js';
import { FORMAT_DESCRIPTIONS, readLayout } from './layout.js';

export { detectFormat } from './detect-format.js';
export { DEFAULT_DATASET_LIMITS, type DatasetLimits } from './coco-reader.js';
export { FORMAT_DESCRIPTIONS } from './layout.js';

export const READABLE_FORMATS = Object.keys(FORMAT_DESCRIPTIONS) as FormatName[];

/**
 * Reads a dataset folder in the given format, or in the one its annotation files name (see layout.ts: several
 * matching readers or none is a FormatError listing what was found and the `format` values that apply).
 */
export async function readDataset(dir: string, format?: FormatName, limits: DatasetLimits = DEFAULT_DATASET_LIMITS): Promise<DatasetSource> {
  if (!(await isDirectory(dir))) throw new FormatError('dataset folder does not exist');
  const root = await datasetRoot(dir);
  if (format !== undefined && !(READABLE_FORMATS as string[]).includes(format)) throw new FormatError(`unknown dataset format "${String(format)}"`);
  return readLayout(root, format, limits);
}

export interface ExtractedDataset extends DatasetSource {
  /** Deletes the extracted files; call it once the items have been consumed (or on failure). */
  cleanup(): Promise<void>;
  /** The temporary folder the archive was extracted to (messages shown to users name paths inside it relatively). */
  dir: string;
}

/**
 * Extracts a zip safely into a fresh temporary folder and reads it. The images stay on disk until `cleanup`, so the
 * items can be iterated (more than once) without holding the archive in memory.
 */
export async function readDatasetZip(
  zipPath: string,
  options: { format?: FormatName; workDir?: string; limits?: Partial<ZipLimits>; datasetLimits?: DatasetLimits } = {},
): Promise<ExtractedDataset> {
  const dir = await mkdtemp(join(options.workDir ?? tmpdir(), EXTRACTION_PREFIX));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    await safeExtractZip(zipPath, dir, options.limits);
    const source = await readDataset(dir, options.format, options.datasetLimits);
    return { ...source, cleanup, dir };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
