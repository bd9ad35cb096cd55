import { open, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { rleProblem, type Rle } from '../../imaging/rle.js';
import type { Annotation, DatasetItem, DatasetSource, Point, Split } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { openRing, rectangleOf } from '../geometry.js';
import { exists, imageSize, walk } from './files.js';

interface CocoCategory {
  id: number;
  name: string;
  supercategory?: string;
}
interface CocoImage {
  id: number;
  file_name: string;
  width?: number;
  height?: number;
  split?: string;
}
interface CocoAnnotation {
  id?: number;
  image_id: number;
  category_id: number;
  bbox?: number[];
  segmentation?: number[][] | number[] | { size: [number, number]; counts: number[] | string };
}
/** Which files to read, as resolved by the layout detection (official COCO: annotations/instances_<split>.json). */
export interface CocoLayout {
  files: string[];
  /** Split per file, when its name says it (instances_val2017.json → valid). */
  splitOf?: Record<string, Split | null>;
  /** Folders (relative to the root) to look for a file's images in, beside the usual places. */
  imageDirs?: Record<string, string[]>;
}

interface CocoDocument {
  images: CocoImage[];
  annotations: CocoAnnotation[];
  categories: CocoCategory[];
}

/** A JSON file that declares itself COCO in its first bytes; only these are parsed. */
export async function looksLikeCoco(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(65536);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead).toString('utf8');
    return /^\s*\{/.test(head) && /"(images|annotations|categories)"\s*:/.test(head);
  } finally {
    await handle.close();
  }
}

/** COCO JSON files under the root: Roboflow's per-split `_annotations.coco.json`, or one document anywhere. */
export async function findCocoFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  for await (const path of walk(root)) {
    if (path.split('/').length > 3 || !path.toLowerCase().endsWith('.json')) continue;
    if (await looksLikeCoco(join(root, path))) found.push(path);
  }
  return found;
}

/**
 * COCO object detection / instance segmentation. Traps handled: category ids from 0; Roboflow's unused placeholder
 * category (the supercategory of the real ones, sometimes with the same name as a real class) is dropped; several
 * ids with one name become one class; empty `segmentation` means a box; a polygon that is exactly the box's
 * rectangle is a box; multi-part polygons become one polygon per part; RLE (list or compressed string) is a mask.
 * Each document is parsed whole (JSON has no cheap streaming parse), one split file at a time.
 */
export async function readCoco(root: string, layout?: CocoLayout): Promise<DatasetSource> {
  const files = layout?.files ?? (await findCocoFiles(root));
  if (files.length === 0) throw new FormatError('no COCO annotation file (a .json with images, annotations and categories) found');
  const classes: string[] = [];
  let shapes = 0;
  let annotations = 0;
  for (const file of files) {
    const doc = await loadDocument(root, file);
    for (const name of new Set(classMap(doc, file).values())) if (!classes.includes(name)) classes.push(name);
    for (const annotation of doc.annotations) {
      annotations++;
      if (hasShape(annotation)) shapes++;
    }
  }
  if (classes.length === 0) throw new FormatError('the COCO file lists no categories');
  // Tools export boxes with box-shaped polygons; only a majority of real outlines makes it a segmentation set.
  const projectType = annotations > 0 && shapes * 2 > annotations ? 'instance_segmentation' : 'object_detection';

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const file of files) {
      const doc = await loadDocument(root, file);
      const classOf = classMap(doc, file);
      const byImage = new Map<number, CocoAnnotation[]>();
      const imageIds = new Set(doc.images.map((image) => image.id));
      for (const annotation of doc.annotations) {
        if (!imageIds.has(annotation.image_id)) {
          throw new FormatError(`${file}: annotation ${annotation.id} refers to image ${annotation.image_id}, which is not listed`);
        }
        const list = byImage.get(annotation.image_id);
        if (list) list.push(annotation);
        else byImage.set(annotation.image_id, [annotation]);
      }
      const folderSplit = layout?.splitOf?.[file] ?? splitFromName(dirname(file).split('/').pop() ?? '');
      for (const image of doc.images) {
        const path = await locateImage(root, file, image.file_name, layout?.imageDirs?.[file]);
        const size = image.width && image.height ? { width: image.width, height: image.height } : await imageSize(path);
        const split = folderSplit ?? (image.split ? splitFromName(image.split) : null) ?? splitOfPath(image.file_name);
        yield {
          split,
          fileName: image.file_name.split('/').pop()!,
          source: { path },
          ...size,
          annotations: (byImage.get(image.id) ?? []).flatMap((a) => convert(a, classOf, size, file)),
        };
      }
    }
  }
  return { format: 'coco', projectType, classes, items };
}

async function loadDocument(root: string, file: string): Promise<CocoDocument> {
  let doc: CocoDocument;
  try {
    doc = JSON.parse(await readFile(join(root, file), 'utf8')) as CocoDocument;
  } catch (error) {
    throw new FormatError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  for (const key of ['images', 'annotations', 'categories'] as const) {
    if (!Array.isArray(doc[key])) throw new FormatError(`${file}: "${key}" must be a list`);
  }
  for (const image of doc.images) {
    if (typeof image.id !== 'number' || typeof image.file_name !== 'string' || image.file_name === '') {
      throw new FormatError(`${file}: every image needs a numeric id and a file_name`);
    }
  }
  return doc;
}

/** Category id → class name, without Roboflow's placeholder supercategory. */
function classMap(doc: CocoDocument, file: string): Map<number, string> {
  const used = new Set(doc.annotations.map((a) => a.category_id));
  const supercategories = new Map<string, number>();
  for (const category of doc.categories) {
    if (typeof category.id !== 'number' || typeof category.name !== 'string' || category.name.trim() === '') {
      throw new FormatError(`${file}: every category needs a numeric id and a name`);
    }
    if (category.supercategory && category.supercategory !== category.name) {
      supercategories.set(category.supercategory, (supercategories.get(category.supercategory) ?? 0) + 1);
    }
  }
  const map = new Map<number, string>();
  for (const category of doc.categories) {
    const isPlaceholder = !used.has(category.id) && (supercategories.has(category.name) || isSameNamedParent(doc, category));
    if (!isPlaceholder) map.set(category.id, category.name.trim());
  }
  return map;
}

/** Roboflow's placeholder when it shares the real class's name: `{id 0, plants, none}` beside `{id 1, plants, plants}`. */
function isSameNamedParent(doc: CocoDocument, category: CocoCategory): boolean {
  return doc.categories.some((other) => other.id !== category.id && other.name === category.name && other.supercategory === category.name);
}

function hasShape(annotation: CocoAnnotation): boolean {
  const seg = annotation.segmentation;
  if (!seg) return false;
  if (!Array.isArray(seg)) return true;
  if (seg.length === 0) return false;
  const parts = (typeof seg[0] === 'number' ? [seg] : seg) as number[][];
  return parts.some((part) => part.length >= 6 && !rectangleOf(toPoints(part)));
}

function convert(
  annotation: CocoAnnotation,
  classOf: Map<number, string>,
  size: { width: number; height: number },
  file: string,
): Annotation[] {
  const className = classOf.get(annotation.category_id);
  const at = `${file}: annotation ${annotation.id ?? '?'}`;
  if (className === undefined) throw new FormatError(`${at} uses category ${annotation.category_id}, which is not listed`);
  const seg = annotation.segmentation;
  if (seg && !Array.isArray(seg)) {
    const rle: Rle = { size: seg.size, counts: typeof seg.counts === 'string' ? decodeCompressedCounts(seg.counts) : seg.counts };
    const problem = Array.isArray(rle.size) ? rleProblem(rle, size.height, size.width) : 'size must be [height, width]';
    if (problem) throw new FormatError(`${at}: RLE ${problem}`);
    return [{ type: 'mask', className, geometry: { rle } }];
  }
  if (Array.isArray(seg) && seg.length > 0) {
    const parts = (typeof seg[0] === 'number' ? [seg] : seg) as number[][];
    const shapes: Annotation[] = [];
    for (const part of parts) {
      if (!Array.isArray(part) || part.length < 6 || part.length % 2 !== 0 || part.some((v) => !Number.isFinite(v))) {
        throw new FormatError(`${at}: a polygon needs at least 3 numeric x, y pairs`);
      }
      const points = openRing(toPoints(part));
      const box = rectangleOf(points);
      if (box) shapes.push({ type: 'bbox', className, geometry: box });
      else if (points.length >= 3) shapes.push({ type: 'polygon', className, geometry: { points } });
    }
    if (shapes.length > 0) return shapes;
  }
  const bbox = annotation.bbox;
  if (!Array.isArray(bbox) || bbox.length !== 4 || bbox.some((v) => !Number.isFinite(v))) {
    throw new FormatError(`${at} has neither a segmentation nor a valid bbox [x, y, width, height]`);
  }
  const [x, y, width, height] = bbox;
  if (width <= 0 || height <= 0) throw new FormatError(`${at}: bbox width and height must be positive`);
  return [{ type: 'bbox', className, geometry: { x, y, width, height } }];
}

function toPoints(flat: number[]): Point[] {
  const points: Point[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) points.push([flat[i], flat[i + 1]]);
  return points;
}

/** pycocotools' compressed `counts` string (6-bit chunks, deltas from two runs back) → run lengths. */
export function decodeCompressedCounts(text: string): number[] {
  const counts: number[] = [];
  let p = 0;
  while (p < text.length) {
    let value = 0;
    let shift = 0;
    let more = true;
    while (more) {
      if (p >= text.length) throw new FormatError('compressed RLE counts are truncated');
      const c = text.charCodeAt(p++) - 48;
      value |= (c & 0x1f) << shift;
      more = (c & 0x20) !== 0;
      shift += 5;
      if (!more && c & 0x10) value |= -1 << shift;
    }
    if (counts.length > 2) value += counts[counts.length - 2];
    counts.push(value);
  }
  return counts;
}

/**
 * The file an image entry names. `file_name` is relative to the JSON's folder (Roboflow), to an `images/` folder
 * beside it, or to the dataset root; names that climb out of the dataset are refused.
 */
async function locateImage(root: string, file: string, fileName: string, imageDirs: string[] = []): Promise<string> {
  const clean = fileName.replace(/\\/g, '/');
  if (clean.startsWith('/') || clean.split('/').includes('..')) {
    throw new FormatError(`${file}: image file_name "${fileName}" leaves the dataset folder`);
  }
  const jsonDir = join(root, dirname(file));
  const base = clean.split('/').pop()!;
  const candidates = [join(jsonDir, clean), join(jsonDir, 'images', clean), join(root, clean), join(root, 'images', clean), join(jsonDir, base), ...imageDirs.map((dir) => join(root, dir, clean))];
  for (const candidate of candidates) if (await exists(candidate)) return candidate;
  throw new FormatError(`${file}: image "${fileName}" is listed but its file is not in the dataset (looked in ${relative(root, jsonDir) || '.'})`);
}

function splitOfPath(fileName: string): Split | null {
  const parts = fileName.split('/');
  for (const part of parts.slice(0, -1)) {
    const split = splitFromName(part);
    if (split) return split;
  }
  return null;
}
