import { join } from 'node:path';
import type { Annotation, DatasetItem, Split } from '../dataset.js';
import type { ImportLedger } from '../import-ledger.js';
import { imageSize } from './files.js';
import { splitOfPath, type DatasetScan } from './scan.js';

/**
 * An image a table-like layout (KITTI, Open Images, VoTT, WIDER Face, MPII) names, with its labels. Labels given in
 * coordinates relative to the image (Open Images) are built once its size is known.
 */
export interface ListedImage {
  split: Split | null;
  annotations: Annotation[] | ((size: { width: number; height: number }) => Annotation[]);
  width?: number;
  height?: number;
}

/**
 * The items of a layout whose labels name their images: the named images in the order they were first named, then
 * every other image of the dataset that `alsoUnlisted` accepts, unlabelled (an image without labels is kept, never
 * dropped). `listed` is keyed by the image's path relative to the dataset root.
 */
export function listedItems(
  scan: DatasetScan,
  listed: Map<string, ListedImage>,
  alsoUnlisted: (path: string) => boolean = () => true,
): () => AsyncGenerator<DatasetItem> {
  return async function* items() {
    for (const [path, image] of listed) {
      const full = join(scan.root, path);
      let { annotations } = image;
      let size = image.width && image.height ? { width: image.width, height: image.height } : undefined;
      if (typeof annotations === 'function') {
        size ??= await imageSize(full);
        annotations = annotations(size);
      }
      yield { split: image.split, fileName: path.split('/').pop()!, source: { path: full }, ...size, annotations };
    }
    for (const path of scan.images) {
      if (listed.has(path) || !alsoUnlisted(path)) continue;
      yield { split: splitOfPath(path), fileName: path.split('/').pop()!, source: { path: join(scan.root, path) }, annotations: [] };
    }
  };
}

/** Adds labels to the listed image `path`, creating its entry. */
export function listImage(listed: Map<string, ListedImage>, path: string, split: Split | null, annotations: Annotation[]): ListedImage {
  let image = listed.get(path);
  if (!image) {
    image = { split, annotations: [] };
    listed.set(path, image);
  }
  if (Array.isArray(image.annotations)) image.annotations.push(...annotations);
  return image;
}

/** Accounts for the labels of an image the files name but the dataset lacks: the image and each label are skipped. */
export function skipMissingImage(ledger: ImportLedger, file: string, reference: string, annotations: { type: string; className: string }[], reason = 'the labels name this image but its file is not in the dataset'): void {
  ledger.skip('images', '', { file, item: `image ${reference}`, reason });
  for (const [i, a] of annotations.entries()) {
    ledger.skip('annotations', a.type, { file, item: `label ${i + 1} of ${reference} (${a.type}, class "${a.className}")`, reason: 'its image is not in the dataset' });
  }
}
