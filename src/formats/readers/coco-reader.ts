import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { JSONParser } from '@streamparser/json';
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

/** What a reader may hold for one archive; past either limit the dataset is refused (413) before anything is stored. */
export interface DatasetLimits {
  /** Annotations over all label files. */
  maxAnnotations: number;
  /** Images listed over all label files. */
  maxImages: number;
}

export const DEFAULT_DATASET_LIMITS: DatasetLimits = { maxAnnotations: 2_000_000, maxImages: 500_000 };

/** One annotation of a COCO file, by the key of the image it belongs to (the key its item carries). */
export interface KeyedAnnotation {
  itemKey: string;
  annotation: Annotation;
}

/** What one scan of a COCO file keeps: its images and categories, never its annotations. */
interface CocoScan {
  file: string;
  images: CocoImage[];
  classOf: Map<number, string>;
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
 *
 * The documents are read as streams (@streamparser/json), never whole: a first pass keeps the images and categories
 * and only counts the annotations (refused past `limits.maxAnnotations`); the annotations are then streamed again
 * one at a time. `labelsApart()` hands them out that way (the import stores the images, then the annotations, and
 * holds neither list); `items()` groups them by image for small datasets (tests, conversions).
 */
export async function readCoco(root: string, limits: DatasetLimits = DEFAULT_DATASET_LIMITS, layout?: CocoLayout): Promise<DatasetSource> {
  const files = layout?.files ?? (await findCocoFiles(root));
  if (files.length === 0) throw new FormatError('no COCO annotation file (a .json with images, annotations and categories) found');
  const classes: string[] = [];
  const scans: CocoScan[] = [];
  const totals = { images: 0, annotations: 0, shapes: 0 };
  for (const file of files) {
    const scan = await scanFile(root, file, limits, totals);
    for (const name of new Set(scan.classOf.values())) if (!classes.includes(name)) classes.push(name);
    scans.push(scan);
  }
  if (classes.length === 0) throw new FormatError('the COCO file lists no categories');
  // Tools export boxes with box-shaped polygons; only a majority of real outlines makes it a segmentation set.
  const projectType = totals.annotations > 0 && totals.shapes * 2 > totals.annotations ? 'instance_segmentation' : 'object_detection';

  /** The images in document order, each with the key its annotations are streamed under, without annotations. */
  async function* bareItems(): AsyncGenerator<DatasetItem & { key: string }> {
    for (const { file, images } of scans) {
      const folderSplit = layout?.splitOf?.[file] ?? splitFromName(dirname(file).split('/').pop() ?? '');
      for (const image of images) {
        const path = await locateImage(root, file, image.file_name, layout?.imageDirs?.[file]);
        const size = image.width && image.height ? { width: image.width, height: image.height } : await imageSize(path);
        const split = folderSplit ?? (image.split ? splitFromName(image.split) : null) ?? splitOfPath(image.file_name);
        yield { key: itemKey(file, image.id), split, fileName: image.file_name.split('/').pop()!, source: { path }, ...size, annotations: [] };
      }
    }
  }

  /** Every annotation, converted, in document order. Sizes are those the images declare (boxes are checked again on import). */
  async function* annotations(): AsyncGenerator<KeyedAnnotation> {
    for (const { file, images, classOf } of scans) {
      const byId = new Map<number, CocoImage>();
      for (const image of images) byId.set(image.id, image);
      // Images that do not declare their size are measured from their file, once each, when first needed.
      const measured = new Map<number, { width: number; height: number }>();
      const sizeOf = async (image: CocoImage) => {
        if (image.width && image.height) return { width: image.width, height: image.height };
        let size = measured.get(image.id);
        if (!size) measured.set(image.id, (size = await imageSize(await locateImage(root, file, image.file_name, layout?.imageDirs?.[file]))));
        return size;
      };
      for await (const { section, value } of cocoValues(root, file)) {
        if (section !== 'annotations') continue;
        const annotation = value as CocoAnnotation;
        if (annotation === null || typeof annotation !== 'object') throw new FormatError(`${file}: every annotation must be an object`);
        const image = byId.get(annotation.image_id);
        if (!image) throw new FormatError(`${file}: annotation ${annotation.id} refers to image ${annotation.image_id}, which is not listed`);
        const size = await sizeOf(image);
        for (const converted of convert(annotation, classOf, size, file)) yield { itemKey: itemKey(file, annotation.image_id), annotation: converted };
      }
    }
  }

  async function* items(): AsyncGenerator<DatasetItem> {
    const byItem = new Map<string, Annotation[]>();
    for await (const { itemKey: key, annotation } of annotations()) {
      const list = byItem.get(key);
      if (list) list.push(annotation);
      else byItem.set(key, [annotation]);
    }
    for await (const { key, ...item } of bareItems()) yield { ...item, annotations: byItem.get(key) ?? [] };
  }

  return { format: 'coco', projectType, classes, items, labelsApart: () => ({ items: bareItems, annotations }) };
}

function itemKey(file: string, imageId: number): string {
  return `${file}#${imageId}`;
}

type Section = 'images' | 'annotations' | 'categories';

/** Bytes parsed between two yields to the event loop (a chunk is parsed synchronously: a few milliseconds). */
const PARSE_CHUNK_BYTES = 16 * 1024;

/**
 * The elements of a COCO file's `images`, `annotations` and `categories` lists, one at a time, as the file streams by;
 * nothing else of the document is assembled. A section that is not a list, or a document that is not JSON, is a
 * FormatError naming the file by its path in the dataset.
 */
async function* cocoValues(root: string, file: string): AsyncGenerator<{ section: Section; value: unknown }> {
  const parser = new JSONParser({ paths: ['$.images.*', '$.annotations.*', '$.categories.*'], keepStack: false });
  let pending: { section: Section; value: unknown }[] = [];
  let failure: Error | null = null;
  parser.onValue = ({ value, key, stack }) => {
    const section = stack[1]?.key as Section;
    if (typeof key !== 'number') failure ??= new FormatError(`${file}: "${section}" must be a list`);
    else pending.push({ section, value });
  };
  parser.onError = (error) => {
    failure ??= new FormatError(`${file} is not valid JSON: ${error.message}`);
  };
  const stream = createReadStream(join(root, file), { highWaterMark: PARSE_CHUNK_BYTES });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (!parser.isEnded) parser.write(chunk);
      if (failure) throw failure;
      const values = pending;
      pending = [];
      yield* values;
      await setImmediate();
    }
    if (!parser.isEnded) parser.end();
    if (failure) throw failure;
    yield* pending;
  } finally {
    stream.destroy();
  }
}

/** First pass over a file: images and categories are kept, annotations only counted and summarised. */
async function scanFile(root: string, file: string, limits: DatasetLimits, totals: { images: number; annotations: number; shapes: number }): Promise<CocoScan> {
  const images: CocoImage[] = [];
  const categories: CocoCategory[] = [];
  const used = new Set<number>();
  const seen = new Set<Section>();
  for await (const { section, value } of cocoValues(root, file)) {
    seen.add(section);
    if (section === 'images') {
      const image = value as CocoImage;
      if (typeof image?.id !== 'number' || typeof image.file_name !== 'string' || image.file_name === '') {
        throw new FormatError(`${file}: every image needs a numeric id and a file_name`);
      }
      if (++totals.images > limits.maxImages) {
        throw new FormatError(`the dataset lists more than ${limits.maxImages} images (MAX_IMPORT_ENTRIES)`, 'archive_too_large');
      }
      images.push({ id: image.id, file_name: image.file_name, width: numberOr(image.width), height: numberOr(image.height), split: typeof image.split === 'string' ? image.split : undefined });
    } else if (section === 'categories') {
      if (categories.length >= MAX_CATEGORIES) throw new FormatError(`${file} lists more than ${MAX_CATEGORIES} categories`);
      categories.push(value as CocoCategory);
    } else {
      const annotation = value as CocoAnnotation;
      if (++totals.annotations > limits.maxAnnotations) {
        throw new FormatError(`the dataset has more than ${limits.maxAnnotations} annotations (MAX_IMPORT_ANNOTATIONS)`, 'archive_too_large');
      }
      if (annotation && typeof annotation === 'object') {
        if (typeof annotation.category_id === 'number' && used.size < MAX_CATEGORIES) used.add(annotation.category_id);
        if (hasShape(annotation)) totals.shapes++;
      }
    }
  }
  return { file, images, classOf: classMap(categories, used, file) };
}

/** More categories than any real dataset has; a file past it is refused rather than kept in memory. */
const MAX_CATEGORIES = 10_000;

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Category id → class name, without Roboflow's placeholder supercategory. */
function classMap(categories: CocoCategory[], used: Set<number>, file: string): Map<number, string> {
  const supercategories = new Map<string, number>();
  for (const category of categories) {
    if (typeof category?.id !== 'number' || typeof category.name !== 'string' || category.name.trim() === '') {
      throw new FormatError(`${file}: every category needs a numeric id and a name`);
    }
    if (category.supercategory && category.supercategory !== category.name) {
      supercategories.set(category.supercategory, (supercategories.get(category.supercategory) ?? 0) + 1);
    }
  }
  const map = new Map<number, string>();
  for (const category of categories) {
    const isPlaceholder = !used.has(category.id) && (supercategories.has(category.name) || isSameNamedParent(categories, category));
    if (!isPlaceholder) map.set(category.id, category.name.trim());
  }
  return map;
}

/** Roboflow's placeholder when it shares the real class's name: `{id 0, plants, none}` beside `{id 1, plants, plants}`. */
function isSameNamedParent(categories: CocoCategory[], category: CocoCategory): boolean {
  return categories.some((other) => other.id !== category.id && other.name === category.name && other.supercategory === category.name);
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
