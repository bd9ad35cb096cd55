import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { maskColours } from '../../imaging/dataset-pixels.js';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, DatasetItem, DatasetSource, Split } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { orderedMap } from '../ordered-map.js';
import { exists, imageSize } from './files.js';
import { scanDataset, type DatasetScan } from './scan.js';

/** The 21 Pascal VOC classes, in palette order (index 0 is the background). */
const VOC_CLASSES = ['background', 'aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car', 'cat', 'chair', 'cow', 'diningtable', 'dog', 'horse', 'motorbike', 'person', 'pottedplant', 'sheep', 'sofa', 'train', 'tvmonitor'];

/** Pascal VOC's colour for class index `i` (the bit-interleaved palette of the devkit). */
export function vocColor(i: number): [number, number, number] {
  let r = 0;
  let g = 0;
  let b = 0;
  for (let j = 0, c = i; j < 8; j++, c >>= 3) {
    r |= ((c >> 0) & 1) << (7 - j);
    g |= ((c >> 1) & 1) << (7 - j);
    b |= ((c >> 2) & 1) << (7 - j);
  }
  return [r, g, b];
}

const IGNORE = '224,224,192'; // VOC's "void" border colour

/**
 * Pascal VOC segmentation masks (the VOC release's `SegmentationClass/`, CVAT's "Segmentation mask 1.1"): a colour
 * PNG per image in `SegmentationClass/`, its image in `JPEGImages/`, colours from `labelmap.txt` (`name:r,g,b::`)
 * or the VOC palette; splits from `ImageSets/Segmentation/{train,val,test}.txt`. One mask annotation per class
 * present; the background and VOC's void border are not classes. Images without a mask are unannotated; a mask whose
 * image is not in `JPEGImages/` is skipped (one mask per class it holds), and so is a name `ImageSets` lists that has
 * neither.
 */
export async function readVocMasks(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const masks = s.files.filter((f) => /(^|\/)SegmentationClass\/[^/]+\.png$/i.test(f));
  if (masks.length === 0) throw new FormatError('no SegmentationClass/*.png masks found');
  const base = masks[0].split('/').slice(0, -2).join('/');
  const colors = await labelMap(join(root, base));
  const classes = [...colors.values()];
  const splits = await segmentationSplits(join(root, base));
  const maskByStem = new Map(masks.map((m) => [stemOf(m.split('/').pop()!), m]));
  const images = s.images.filter((p) => /(^|\/)JPEGImages\/[^/]+$/.test(p));
  if (images.length === 0) throw new FormatError('no JPEGImages/ folder with the images found');
  const ledger = await strays(root, images, maskByStem, splits, colors);

  async function* items(): AsyncGenerator<DatasetItem> {
    yield* orderedMap(images, 4, async (relative) => {
      const path = join(root, relative);
      const fileName = relative.split('/').pop()!;
      const size = await imageSize(path);
      const mask = maskByStem.get(stemOf(fileName));
      const annotations = mask ? await maskAnnotations(join(root, mask), size, colors, mask) : [];
      return { split: splits.get(stemOf(fileName)) ?? null, fileName, source: { path }, ...size, annotations };
    });
  }
  return { format: 'voc_masks', projectType: 'semantic_segmentation', classes, items, ledger };
}

/** The masks whose image is missing (each class they hold) and the names ImageSets lists that have neither, as skipped. */
async function strays(root: string, images: string[], maskByStem: Map<string, string>, splits: Map<string, Split>, colors: Map<string, string>): Promise<ImportLedger> {
  const ledger = new ImportLedger();
  const stems = new Set(images.map((p) => stemOf(p.split('/').pop()!)));
  for (const [stem, mask] of maskByStem) {
    if (stems.has(stem)) continue;
    const path = join(root, mask);
    for (const a of await maskAnnotations(path, await imageSize(path), colors, mask)) {
      ledger.skip('annotations', 'mask', { file: mask, item: `mask of class "${a.className}"`, reason: `its image ${stem}.* is not in JPEGImages/` });
    }
  }
  for (const stem of splits.keys()) {
    if (!stems.has(stem) && !maskByStem.has(stem)) ledger.skip('images', '', { file: 'ImageSets/Segmentation', item: `image ${stem}`, reason: 'listed, but neither its mask nor its image is in the dataset' });
  }
  return ledger;
}

async function labelMap(dir: string): Promise<Map<string, string>> {
  const colors = new Map<string, string>();
  const path = join(dir, 'labelmap.txt');
  if (await exists(path)) {
    for (const line of (await readFile(path, 'utf8')).split(/\r?\n/)) {
      if (!line.trim() || line.startsWith('#')) continue;
      const [name, rgb] = line.split(':');
      const parts = (rgb ?? '').split(',').map(Number);
      if (!name?.trim() || parts.length !== 3 || parts.some((v) => !Number.isInteger(v))) throw new FormatError(`labelmap.txt: expected "name:r,g,b::", got "${line}"`);
      if (name.trim().toLowerCase() === 'background') continue;
      colors.set(parts.join(','), name.trim());
    }
    if (colors.size === 0) throw new FormatError('labelmap.txt lists no classes besides the background');
    return colors;
  }
  VOC_CLASSES.forEach((name, i) => i > 0 && colors.set(vocColor(i).join(','), name));
  return colors;
}

async function segmentationSplits(dir: string): Promise<Map<string, Split>> {
  const splits = new Map<string, Split>();
  for (const [file, split] of [['train.txt', 'train'], ['val.txt', 'valid'], ['test.txt', 'test']] as const) {
    const path = join(dir, 'ImageSets', 'Segmentation', file);
    if (!(await exists(path))) continue;
    for (const line of (await readFile(path, 'utf8')).split(/\r?\n/)) if (line.trim()) splits.set(line.trim().split(/\s+/)[0], split);
  }
  return splits;
}

async function maskAnnotations(path: string, size: { width: number; height: number }, colors: Map<string, string>, where: string): Promise<Annotation[]> {
  const pixels = await maskColours(path, size);
  const n = size.width * size.height;
  const byClass = new Map<string, Uint8Array>();
  for (let i = 0; i < n; i++) {
    const key = `${pixels[i * 3]},${pixels[i * 3 + 1]},${pixels[i * 3 + 2]}`;
    if (key === '0,0,0' || key === IGNORE) continue;
    const name = colors.get(key);
    if (name === undefined) throw new FormatError(`${where}: colour ${key} is not in the label map`);
    let bitmap = byClass.get(name);
    if (!bitmap) byClass.set(name, (bitmap = new Uint8Array(n)));
    bitmap[i] = 1;
  }
  return [...byClass].map(([className, data]) => ({ type: 'mask', className, geometry: { rle: encodeRle({ width: size.width, height: size.height, data }) } }));
}
