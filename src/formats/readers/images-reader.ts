import { join } from 'node:path';
import type { DatasetItem, DatasetSource } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { scanDataset, splitOfPath, type DatasetScan } from './scan.js';

/** A plain folder of images (any depth; a `train`/`valid`/`test` folder gives the split), without annotations. */
export async function readImages(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  if (s.images.length === 0) throw new FormatError('the folder holds no images');
  async function* items(): AsyncGenerator<DatasetItem> {
    for (const path of s.images) {
      yield { split: splitOfPath(path), fileName: path.split('/').pop()!, source: { path: join(root, path) }, annotations: [] };
    }
  }
  return { format: 'images', projectType: 'object_detection', classes: [], items };
}
