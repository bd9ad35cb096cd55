import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Annotation, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { openRing } from '../geometry.js';
import { decodeCompressedCounts } from './coco-reader.js';
import { imageSize } from './files.js';
import { addClass, finite, projectTypeOf, requireImage, scanDataset, type DatasetScan } from './scan.js';

interface DatumaroAnnotation {
  type?: string;
  label_id?: number;
  bbox?: number[];
  points?: number[];
  rle?: { counts?: string | number[]; size?: [number, number] };
}
interface DatumaroItem {
  id?: string;
  annotations?: DatumaroAnnotation[];
  image?: { path?: string; size?: [number, number] };
  media?: { path?: string };
}
interface DatumaroDocument {
  categories?: { label?: { labels?: { name?: string }[] } };
  items?: DatumaroItem[];
}

/** A Datumaro document: `{categories: {label: …}, items: […]}` (CVAT's "Datumaro 1.0" export, Datumaro's own). */
export function looksLikeDatumaro(head: string): boolean {
  return /^\s*\{/.test(head) && /"items"\s*:/.test(head) && /"categories"\s*:/.test(head);
}

/**
 * Datumaro JSON: `annotations/<subset>.json` and images under `images/<subset>/` (or `images/`). Annotation types
 * used: `bbox` ([x, y, w, h]), `polygon` (flat points), `mask` (COCO RLE, compressed counts) and `label`
 * (image-level); points, polylines, captions and cuboids have no counterpart here and are left out.
 */
export async function readDatumaro(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files = s.files.filter((f) => /(^|\/)annotations\/[^/]+\.json$/i.test(f));
  const docs: { file: string; subset: string; doc: DatumaroDocument }[] = [];
  for (const file of files) {
    const doc = await load(root, file);
    if (doc) docs.push({ file, subset: file.split('/').pop()!.replace(/\.json$/i, ''), doc });
  }
  if (docs.length === 0) throw new FormatError('no Datumaro annotations/<subset>.json found');
  const classes: string[] = [];
  const types: Annotation['type'][] = [];
  for (const { doc } of docs) {
    for (const label of doc.categories?.label?.labels ?? []) if (typeof label.name === 'string' && label.name.trim()) addClass(classes, label.name.trim());
  }

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const { file, subset, doc } of docs) {
      const labels = (doc.categories?.label?.labels ?? []).map((l) => String(l.name ?? '').trim());
      const imagesDir = file.split('/').slice(0, -2).concat('images').filter(Boolean).join('/');
      for (const item of doc.items ?? []) {
        const where = `${file} item "${item.id}"`;
        const reference = item.image?.path ?? item.media?.path ?? `${item.id}.jpg`;
        const path = requireImage(s, reference, where, [`${imagesDir}/${subset}`, imagesDir]);
        const size = item.image?.size && finite(item.image.size) ? { height: item.image.size[0], width: item.image.size[1] } : await imageSize(path);
        const annotations: Annotation[] = [];
        for (const a of item.annotations ?? []) {
          const className = labels[a.label_id ?? -1];
          if (a.label_id === undefined || a.label_id === null) continue;
          if (className === undefined) throw new FormatError(`${where}: label_id ${a.label_id} is not in the label categories`);
          const converted = convert(a, className, size, where);
          if (converted) annotations.push(converted);
        }
        yield { split: splitFromName(subset), fileName: path.split('/').pop()!, source: { path }, ...size, annotations };
      }
    }
  }
  // The project type needs the annotation types: one pass over the (already parsed) documents.
  for (const { doc } of docs) for (const item of doc.items ?? []) for (const a of item.annotations ?? []) {
    const type = ({ bbox: 'bbox', polygon: 'polygon', mask: 'mask', label: 'classification' } as const)[a.type as 'bbox'];
    if (type) types.push(type);
  }
  return { format: 'datumaro', projectType: projectTypeOf(types), classes, items };
}

function convert(a: DatumaroAnnotation, className: string, size: { width: number; height: number }, where: string): Annotation | null {
  switch (a.type) {
    case 'label':
      return { type: 'classification', className, geometry: {} };
    case 'bbox': {
      if (!Array.isArray(a.bbox) || a.bbox.length !== 4 || !finite(a.bbox) || a.bbox[2] <= 0 || a.bbox[3] <= 0) {
        throw new FormatError(`${where}: a bbox needs [x, y, width, height] with a positive size`);
      }
      const [x, y, width, height] = a.bbox;
      return { type: 'bbox', className, geometry: { x, y, width, height } };
    }
    case 'polygon': {
      if (!Array.isArray(a.points) || a.points.length < 6 || a.points.length % 2 !== 0 || !finite(a.points)) {
        throw new FormatError(`${where}: a polygon needs at least 3 x, y pairs`);
      }
      const points: Point[] = [];
      for (let i = 0; i < a.points.length; i += 2) points.push([a.points[i], a.points[i + 1]]);
      return { type: 'polygon', className, geometry: { points: openRing(points) } };
    }
    case 'mask': {
      const rle = a.rle;
      if (!rle || !Array.isArray(rle.size) || rle.size[0] !== size.height || rle.size[1] !== size.width) {
        throw new FormatError(`${where}: a mask needs an rle whose size is the image's [height, width]`);
      }
      const counts = typeof rle.counts === 'string' ? decodeCompressedCounts(rle.counts) : rle.counts;
      if (!Array.isArray(counts)) throw new FormatError(`${where}: mask rle counts are missing`);
      return { type: 'mask', className, geometry: { rle: { size: [size.height, size.width], counts } } };
    }
    default:
      return null;
  }
}

async function load(root: string, file: string): Promise<DatumaroDocument | null> {
  let doc: DatumaroDocument;
  try {
    doc = JSON.parse(await readFile(join(root, file), 'utf8')) as DatumaroDocument;
  } catch (error) {
    throw new FormatError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  return doc && typeof doc === 'object' && Array.isArray(doc.items) ? doc : null;
}
