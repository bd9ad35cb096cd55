import { readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { maskChannel } from '../../imaging/dataset-pixels.js';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, DatasetItem, DatasetSource, Split } from '../dataset.js';
import { isImageName, splitFromName, stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { orderedMap } from '../ordered-map.js';
import { exists, imageSize, listDir } from './files.js';

export const MASK_CLASSES_FILE = '_classes.csv';
export const MASK_SUFFIX = '_mask.png';

/** Pixel value 0 under one of these names is the unlabelled background, not a class. */
const BACKGROUND_NAMES = new Set(['background', '_background_', 'bg', 'unlabeled', 'unlabelled', 'void']);

interface MaskFolder {
  split: Split | null;
  dir: string;
  /** Pixel value → class name. */
  values: Map<number, string>;
}

/**
 * Semantic segmentation as PNG class-index masks (Roboflow "PNG Masks"): `<stem>_mask.png` beside each image and a
 * `_classes.csv` (`Pixel Value, Class`) per split folder. Each class present in a mask becomes one mask annotation
 * (COCO RLE) on its image; a mask of another size than its image is resized to it (nearest neighbour, so class
 * indices survive). An image without a mask is unannotated; a mask without its image is skipped, one mask per class it
 * holds, and so is a file that is neither an image nor a mask.
 */
export async function readMasks(root: string): Promise<DatasetSource> {
  const folders = await maskFolders(root);
  if (folders.length === 0) throw new FormatError(`no ${MASK_CLASSES_FILE} with images beside it found`);
  const classes: string[] = [];
  for (const folder of folders) {
    for (const [, name] of [...folder.values].sort((a, b) => a[0] - b[0])) if (!classes.includes(name)) classes.push(name);
  }
  const ledger = new ImportLedger();
  for (const folder of folders) await skipStrays(folder, root, ledger);

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const folder of folders) {
      const { files } = await listDir(folder.dir);
      const images = files.filter((f) => isImageName(f) && !f.endsWith(MASK_SUFFIX));
      yield* orderedMap(images, 4, async (fileName) => {
        const path = join(folder.dir, fileName);
        const size = await imageSize(path);
        const maskPath = join(folder.dir, stemOf(fileName) + MASK_SUFFIX);
        const annotations = (await exists(maskPath)) ? await maskAnnotations(maskPath, size, folder, fileName) : [];
        return { split: folder.split, fileName, source: { path }, ...size, annotations };
      });
    }
  }
  return { format: 'masks', projectType: 'semantic_segmentation', classes, items, ledger };
}

/** Masks whose image is not beside them (each class a mask holds, skipped), and files that are neither images nor masks. */
async function skipStrays(folder: MaskFolder, root: string, ledger: ImportLedger): Promise<void> {
  const { files } = await listDir(folder.dir);
  const stems = new Set(files.filter((f) => isImageName(f) && !f.endsWith(MASK_SUFFIX)).map(stemOf));
  const where = (f: string) => relative(root, join(folder.dir, f)).split(sep).join('/');
  for (const f of files) {
    if (f === MASK_CLASSES_FILE || (isImageName(f) && !f.endsWith(MASK_SUFFIX))) continue;
    if (!f.endsWith(MASK_SUFFIX)) {
      ledger.skip('images', '', { file: where(f), item: `file ${where(f)}`, reason: 'neither an image nor a mask (<image stem>_mask.png)' });
      continue;
    }
    const stem = f.slice(0, -MASK_SUFFIX.length);
    if (stems.has(stem)) continue;
    const path = join(folder.dir, f);
    for (const mask of await maskAnnotations(path, await imageSize(path), folder, f)) {
      ledger.skip('annotations', 'mask', { file: where(f), item: `mask of class "${mask.className}"`, reason: `its image ${stem}.* is not beside it` });
    }
  }
}

async function maskFolders(root: string): Promise<MaskFolder[]> {
  const folders: MaskFolder[] = [];
  const { files, dirs } = await listDir(root);
  if (files.includes(MASK_CLASSES_FILE)) folders.push({ split: null, dir: root, values: await readClassesCsv(join(root, MASK_CLASSES_FILE)) });
  for (const dir of dirs) {
    const path = join(root, dir);
    if (await exists(join(path, MASK_CLASSES_FILE))) {
      folders.push({ split: splitFromName(dir), dir: path, values: await readClassesCsv(join(path, MASK_CLASSES_FILE)) });
    }
  }
  return folders;
}

export async function readClassesCsv(path: string): Promise<Map<number, string>> {
  let rows: string[][];
  try {
    rows = parseCsv(await readFile(path, 'utf8'), { trim: true, skip_empty_lines: true, relax_column_count: true }) as string[][];
  } catch (error) {
    throw new FormatError(`${MASK_CLASSES_FILE} is not valid CSV: ${(error as Error).message}`);
  }
  const values = new Map<number, string>();
  for (const [index, row] of rows.entries()) {
    const value = Number(row[0]);
    if (index === 0 && !Number.isInteger(value)) continue; // header
    const name = (row[1] ?? '').trim();
    if (!Number.isInteger(value) || value < 0 || value > 255 || !name) {
      throw new FormatError(`${MASK_CLASSES_FILE} line ${index + 1}: expected "pixel value (0-255), class name"`);
    }
    if (value === 0 && BACKGROUND_NAMES.has(name.toLowerCase())) continue;
    values.set(value, name);
  }
  if (values.size === 0) throw new FormatError(`${MASK_CLASSES_FILE} lists no classes besides the background`);
  return values;
}

async function maskAnnotations(
  maskPath: string,
  size: { width: number; height: number },
  folder: MaskFolder,
  fileName: string,
): Promise<Annotation[]> {
  let pixels: Buffer;
  try {
    pixels = (await maskChannel(maskPath, size)).data;
  } catch (error) {
    throw new FormatError(`mask of ${fileName} cannot be read: ${(error as Error).message}`);
  }
  const background = folder.values.has(0) ? -1 : 0;
  const present = new Set<number>();
  for (let i = 0; i < pixels.length; i++) if (pixels[i] !== background) present.add(pixels[i]);
  const annotations: Annotation[] = [];
  for (const value of [...present].sort((a, b) => a - b)) {
    const className = folder.values.get(value);
    if (className === undefined) throw new FormatError(`mask of ${fileName} holds pixel value ${value}, which ${MASK_CLASSES_FILE} does not list`);
    const bitmap = new Uint8Array(pixels.length);
    for (let i = 0; i < pixels.length; i++) if (pixels[i] === value) bitmap[i] = 1;
    annotations.push({ type: 'mask', className, geometry: { rle: encodeRle({ width: size.width, height: size.height, data: bitmap }) } });
  }
  return annotations;
}
