import { join } from 'node:path';
import type { DatasetItem, DatasetSource, Split } from '../dataset.js';
import { isImageName, splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { listDir, walk } from './files.js';

interface ClassFolder {
  split: Split | null;
  className: string;
  dir: string;
}

/** Where an image of a class-folder dataset belongs: its split, and its class (null: at the root of a split). */
interface Placed {
  path: string;
  split: Split | null;
  className: string | null;
}

/**
 * Class-per-folder classification: `{train,valid,test}/<class>/*.jpg`, or `<class>/*.jpg` without splits. As
 * torchvision's `ImageFolder` (which Ultralytics classify uses) does, the class is the first folder under the split
 * (or the root) and its images are found at any depth: `a/b/img.jpg` is of class `a`, so a dataset means here what it
 * means to the tools that train on it. Images directly at the root (or directly in a split folder) have no class
 * folder: they are kept, unlabelled (ImageFolder would leave them out). A file in a class folder that is not an image
 * (a video, a text) is skipped, with its path.
 */
export async function readFolders(root: string): Promise<DatasetSource> {
  const ledger = new ImportLedger();
  const placed = await placeImages(root, ledger);
  if (!placed.some((p) => p.className !== null)) throw new FormatError('no class folders with images found');
  const classes = [...new Set(placed.flatMap((p) => (p.className === null ? [] : [p.className])))].sort();

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const { path, split, className } of placed) {
      yield {
        split,
        fileName: path.split('/').pop()!,
        source: { path: join(root, path) },
        annotations: className === null ? [] : [{ type: 'classification', className, geometry: {} }],
      };
    }
  }
  return { format: 'folders', projectType: 'classification', classes, items, ledger };
}

/** Every image under `root`, with its split and class folder (see `readFolders`); files in a class folder that are no image are skipped in `ledger`. */
async function placeImages(root: string, ledger?: ImportLedger): Promise<Placed[]> {
  const { dirs } = await listDir(root);
  const hasSplits = dirs.some((d) => splitFromName(d));
  const placed: Placed[] = [];
  for await (const path of walk(root)) {
    let parts = path.split('/');
    const split = hasSplits && parts.length > 1 ? splitFromName(parts[0]) : null;
    if (split) parts = parts.slice(1);
    if (!isImageName(parts[parts.length - 1])) {
      if (parts.length > 1) ledger?.skip('images', '', { file: path, item: `file ${path}`, reason: `not an image: the class folder "${parts[0]}" holds images` });
      continue;
    }
    placed.push({ path, split, className: parts.length > 1 ? parts[0] : null });
  }
  return placed;
}

export async function classFolders(root: string): Promise<ClassFolder[]> {
  const found = new Map<string, ClassFolder>();
  for (const { path, split, className } of await placeImages(root)) {
    if (className === null) continue;
    const parts = path.split('/');
    const dir = join(root, ...parts.slice(0, split ? 2 : 1));
    if (!found.has(dir)) found.set(dir, { split, className, dir });
  }
  return [...found.values()];
}
