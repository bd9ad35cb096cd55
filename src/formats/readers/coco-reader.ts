import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { JSONParser } from '@streamparser/json';
import { rleProblem, type Rle } from '../../imaging/rle.js';
import { MAX_ATTRIBUTE_VALUES, parseSkeleton, specsFromValues, type AttributeValue, type Skeleton } from '../../imaging/class-specs.js';
import { normalizeDegrees, type Keypoint } from '../../imaging/geometry.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, Point, ProjectType, Split } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { openRing, quadToBox, rectangleOf } from '../geometry.js';
import { exists, imageSize, walk } from './files.js';
import { JsonLists, NotLists } from './json-lists.js';

interface CocoCategory {
  id: number;
  name: string;
  supercategory?: string;
  /** Keypoint categories (person_keypoints): the point names, and edges between them numbered from 1. */
  keypoints?: string[];
  skeleton?: number[][];
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
  /** `[x, y, v] × k`, in the order of the category's `keypoints`. */
  keypoints?: number[];
  num_keypoints?: number;
  iscrowd?: number;
  /** CVAT's COCO export (and ours): attribute values, and `rotation` (degrees) of a rotated box. */
  attributes?: Record<string, unknown>;
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
  /** Point count of each keypoint category, by category id. */
  keypointsOf: Map<number, number>;
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
 * COCO object detection / instance segmentation / keypoints. Traps handled: category ids from 0; Roboflow's unused
 * placeholder category (the supercategory of the real ones, sometimes with the same name as a real class) is
 * dropped; several ids with one name become one class; empty `segmentation` means a box; a polygon that is exactly
 * the box's rectangle is a box; a `segmentation` of several polygons is ONE object (a polygon with `parts`); RLE (list
 * or compressed string) is a mask. Keypoint categories (`keypoints` names, `skeleton` edges numbered from 1) become
 * class skeletons (edges from 0; left/right pairs guessed from the point names, COCO has none); an annotation with
 * labelled `keypoints` becomes a keypoints shape with its `bbox`, and its outline, when it has one, a second shape in
 * the same group (`groupId`, the COCO annotation id). The project type follows what the files hold: keypoints →
 * keypoint_detection; any outline or mask → instance_segmentation; else object_detection.
 *
 * What cannot be kept is skipped through the ledger, with its file and reason: an annotation of an unlisted image or
 * category, an RLE that does not decode, a keypoints list that does not match its category, an image listed whose
 * file is missing.
 *
 * The documents are read as streams (@streamparser/json), never whole: a first pass keeps the images and categories
 * and only counts the annotations (refused past `limits.maxAnnotations`); the annotations are then streamed again
 * one at a time. `labelsApart()` hands them out that way (the import stores the images, then the annotations, and
 * holds neither list); `items()` groups them by image for small datasets (tests, conversions).
 */
export async function readCoco(
  root: string,
  limits: DatasetLimits = DEFAULT_DATASET_LIMITS,
  layout?: CocoLayout,
  ledger: ImportLedger = new ImportLedger(),
): Promise<DatasetSource> {
  const files = layout?.files ?? (await findCocoFiles(root));
  if (files.length === 0) throw new FormatError('no COCO annotation file (a .json with images, annotations and categories) found');
  const classes: string[] = [];
  const classSpecs = new Map<string, ClassSpec>();
  const scans: CocoScan[] = [];
  const totals: ScanTotals = { images: 0, annotations: 0, shapes: 0, keypoints: 0 };
  for (const file of files) {
    const scan = await scanFile(root, file, limits, totals, classSpecs);
    for (const name of new Set(scan.classOf.values())) if (!classes.includes(name)) classes.push(name);
    scans.push(scan);
  }
  if (classes.length === 0) throw new FormatError('the COCO file lists no categories');
  // Boxes saved as box-shaped polygons are boxes (rectangleOf); one real outline or mask makes it a segmentation set.
  const projectType: ProjectType = totals.keypoints > 0 ? 'keypoint_detection' : totals.shapes > 0 ? 'instance_segmentation' : 'object_detection';

  /** The images in document order, each with the key its annotations are streamed under, without annotations. */
  async function* bareItems(): AsyncGenerator<DatasetItem & { key: string }> {
    for (const { file, images } of scans) {
      const folderSplit = layout?.splitOf?.[file] ?? splitFromName(dirname(file).split('/').pop() ?? '');
      for (const image of images) {
        const path = await locateImage(root, file, image.file_name, layout?.imageDirs?.[file]);
        if (path === null) {
          ledger.skip('images', '', { file, item: `image ${image.id} "${image.file_name}"`, reason: 'its file is not in the dataset' });
          continue;
        }
        const size = image.width && image.height ? { width: image.width, height: image.height } : await imageSize(path);
        const split = folderSplit ?? (image.split ? splitFromName(image.split) : null) ?? splitOfPath(image.file_name);
        yield { key: itemKey(file, image.id), split, fileName: image.file_name.split('/').pop()!, source: { path }, ...size, annotations: [] };
      }
    }
  }

  /** Every annotation, converted, in document order. Sizes are those the images declare (boxes are checked again on import). */
  async function* annotations(): AsyncGenerator<KeyedAnnotation> {
    for (const { file, images, classOf, keypointsOf } of scans) {
      const byId = new Map<number, CocoImage>();
      for (const image of images) byId.set(image.id, image);
      // Images that do not declare their size are measured from their file, once each, when first needed.
      const measured = new Map<number, { width: number; height: number } | null>();
      const sizeOf = async (image: CocoImage) => {
        if (image.width && image.height) return { width: image.width, height: image.height };
        let size = measured.get(image.id);
        if (size === undefined) {
          const path = await locateImage(root, file, image.file_name, layout?.imageDirs?.[file]);
          measured.set(image.id, (size = path === null ? null : await imageSize(path)));
        }
        return size;
      };
      for await (const { section, value } of cocoValues(root, file)) {
        if (section !== 'annotations') continue;
        const annotation = value as CocoAnnotation;
        if (annotation === null || typeof annotation !== 'object') throw new FormatError(`${file}: every annotation must be an object`);
        const at = { file, item: `annotation ${annotation.id ?? '?'}` };
        const image = byId.get(annotation.image_id);
        if (!image) {
          ledger.skip('annotations', cocoType(annotation), { ...at, reason: `it refers to image ${annotation.image_id}, which is not listed` });
          continue;
        }
        const size = await sizeOf(image);
        if (!size) {
          ledger.skip('annotations', cocoType(annotation), { ...at, reason: `its image "${image.file_name}" is not in the dataset` });
          continue;
        }
        for (const converted of convert(annotation, classOf, keypointsOf, size, file, ledger)) yield { itemKey: itemKey(file, annotation.image_id), annotation: converted };
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
    for await (const { key, ...item } of bareItems()) {
      yield { ...item, annotations: byItem.get(key) ?? [] };
      byItem.delete(key);
    }
    // Labels of images whose file is missing (the image was skipped): accounted, not dropped.
    for (const [key, list] of byItem) {
      for (const annotation of list) ledger.skip('annotations', annotation.type, { file: key.split('#')[0], item: `annotation (${annotation.type}, class "${annotation.className}") of image ${key.split('#')[1]}`, reason: 'its image is not in the dataset' });
    }
  }

  return { format: 'coco', projectType, classes, classSpecs, ledger, items, labelsApart: () => ({ items: bareItems, annotations }) };
}

interface ScanTotals {
  images: number;
  annotations: number;
  /** Annotations with a real outline or mask. */
  shapes: number;
  /** Annotations with at least one labelled keypoint. */
  keypoints: number;
}

/** The annotation type a COCO annotation reads as, for the ledger (before it is converted). */
function cocoType(annotation: CocoAnnotation): string {
  if (Array.isArray(annotation.keypoints) && annotation.keypoints.some((v, i) => i % 3 === 2 && v > 0)) return 'keypoints';
  const seg = annotation.segmentation;
  if (seg && !Array.isArray(seg)) return 'mask';
  return Array.isArray(seg) && seg.length > 0 ? 'polygon' : 'bbox';
}

function itemKey(file: string, imageId: number): string {
  return `${file}#${imageId}`;
}

type Section = 'images' | 'annotations' | 'categories';

/** Bytes parsed between two yields to the event loop (a chunk is parsed synchronously: a few milliseconds). */
const PARSE_CHUNK_BYTES = 16 * 1024;

const SECTIONS: ReadonlySet<Section> = new Set(['images', 'annotations', 'categories']);

/**
 * The elements of a COCO file's `images`, `annotations` and `categories` lists, one at a time, as the file streams by;
 * nothing else of the document is assembled. A section that is not a list, or a document that is not JSON, is a
 * FormatError naming the file by its path in the dataset. Well-formed documents are cut into elements by JsonLists;
 * any other (or a syntax error) is read again by @streamparser/json from the element where JsonLists stopped, which
 * says what is wrong (or keeps what it accepts).
 */
async function* cocoValues(root: string, file: string): AsyncGenerator<{ section: Section; value: unknown }> {
  let read = 0;
  const lists = new JsonLists(SECTIONS);
  const stream = createReadStream(join(root, file), { highWaterMark: PARSE_CHUNK_BYTES });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (const { list, value } of lists.push(chunk)) {
        read++;
        yield { section: list, value };
      }
      await setImmediate();
    }
    lists.end();
    return;
  } catch (error) {
    if (!(error instanceof NotLists)) throw error;
  } finally {
    stream.destroy();
  }
  let skip = read;
  for await (const value of streamedCocoValues(root, file)) if (skip-- <= 0) yield value;
}

/** cocoValues through @streamparser/json's tokenizer, for documents JsonLists does not take. */
async function* streamedCocoValues(root: string, file: string): AsyncGenerator<{ section: Section; value: unknown }> {
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
async function scanFile(root: string, file: string, limits: DatasetLimits, totals: ScanTotals, classSpecs: Map<string, ClassSpec>): Promise<CocoScan> {
  const images: CocoImage[] = [];
  const categories: CocoCategory[] = [];
  const used = new Set<number>();
  const seen = new Set<Section>();
  const attributeValues = new Map<number, Map<string, Set<AttributeValue>>>();
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
        if (annotation.attributes && typeof annotation.attributes === 'object' && typeof annotation.category_id === 'number') {
          for (const [name, value] of Object.entries(annotation.attributes)) {
            if (name === 'rotation' || !isAttributeValue(value)) continue;
            let byName = attributeValues.get(annotation.category_id);
            if (!byName) attributeValues.set(annotation.category_id, (byName = new Map()));
            let values = byName.get(name);
            if (!values) byName.set(name, (values = new Set()));
            if (values.size <= MAX_ATTRIBUTE_VALUES) values.add(value);
          }
        }
        if (Array.isArray(annotation.keypoints) && annotation.keypoints.some((v, i) => i % 3 === 2 && v > 0)) totals.keypoints++;
        else if (hasShape(annotation)) totals.shapes++;
      }
    }
  }
  const classOf = classMap(categories, used, file);
  const keypointsOf = new Map<number, number>();
  for (const category of categories) {
    const name = classOf.get(category.id);
    if (name === undefined || !Array.isArray(category.keypoints) || category.keypoints.length === 0) continue;
    keypointsOf.set(category.id, category.keypoints.length);
    if (!classSpecs.get(name)?.skeleton) classSpecs.set(name, { ...classSpecs.get(name), skeleton: skeletonOf(category, file) });
  }
  // Attribute values seen per class (several category ids may share a name) → specs that admit them.
  const byClass = new Map<string, Map<string, Set<AttributeValue>>>();
  for (const [id, byName] of attributeValues) {
    const name = classOf.get(id);
    if (name === undefined) continue;
    const merged = byClass.get(name) ?? new Map<string, Set<AttributeValue>>();
    for (const [attribute, values] of byName) merged.set(attribute, new Set([...(merged.get(attribute) ?? []), ...values]));
    byClass.set(name, merged);
  }
  for (const [name, values] of byClass) if (!classSpecs.get(name)?.attributes) classSpecs.set(name, { ...classSpecs.get(name), attributes: specsFromValues(values) });
  return { file, images, classOf, keypointsOf };
}

const isAttributeValue = (value: unknown): value is AttributeValue =>
  typeof value === 'boolean' || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

/**
 * A keypoint category's skeleton: its point names, its `skeleton` edges (COCO numbers points from 1; ours from 0),
 * and the left/right pairs a horizontal flip swaps, which COCO does not record: guessed from the names
 * (`left_eye` ↔ `right_eye`, `l_ankle` ↔ `r_ankle`, `LeftHand` ↔ `RightHand`).
 */
function skeletonOf(category: CocoCategory, file: string): Skeleton {
  const points = category.keypoints!.map(String);
  const edges = (Array.isArray(category.skeleton) ? category.skeleton : [])
    .filter((e) => Array.isArray(e) && e.length === 2 && e.every((i) => Number.isInteger(i) && i >= 1 && i <= points.length) && e[0] !== e[1])
    .map((e) => [e[0] - 1, e[1] - 1]);
  try {
    return parseSkeleton({ points, edges, flip_pairs: guessFlipPairs(points) });
  } catch (error) {
    throw new FormatError(`${file}: category "${category.name}" has an invalid keypoint list: ${(error as Error).message}`);
  }
}

/** Left/right point pairs named alike (`left_x`/`right_x`, `l_x`/`r_x`, `x_l`/`x_r`, any case). */
export function guessFlipPairs(points: string[]): [number, number][] {
  const pairs: [number, number][] = [];
  const paired = new Set<number>();
  const swaps: [RegExp, (m: string) => string][] = [
    [/left/i, (m) => (m === 'left' ? 'right' : m === 'LEFT' ? 'RIGHT' : 'Right')],
    [/^l(?=[_\-. ])/i, (m) => (m === 'l' ? 'r' : 'R')],
    [/(?<=[_\-. ])l$/i, (m) => (m === 'l' ? 'r' : 'R')],
  ];
  points.forEach((name, i) => {
    if (paired.has(i)) return;
    for (const [pattern, swap] of swaps) {
      if (!pattern.test(name)) continue;
      const j = points.indexOf(name.replace(pattern, swap));
      if (j >= 0 && j !== i && !paired.has(j)) {
        pairs.push([i, j]);
        paired.add(i).add(j);
        break;
      }
    }
  });
  return pairs;
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
  keypointsOf: Map<number, number>,
  size: { width: number; height: number },
  file: string,
  ledger: ImportLedger,
): Annotation[] {
  const className = classOf.get(annotation.category_id);
  const at = { file, item: `annotation ${annotation.id ?? '?'}` };
  const skip = (type: string, reason: string) => ledger.skip('annotations', type, { ...at, reason });
  if (className === undefined) {
    skip(cocoType(annotation), `it uses category ${annotation.category_id}, which is not listed`);
    return [];
  }
  const bbox = validBox(annotation.bbox);
  const attributes: Record<string, AttributeValue> = {};
  const rawAttributes = annotation.attributes && typeof annotation.attributes === 'object' ? annotation.attributes : {};
  for (const [name, value] of Object.entries(rawAttributes)) {
    if (name === 'rotation') continue;
    if (isAttributeValue(value)) attributes[name] = value;
    else ledger.skip('attributes', '', { file, item: `attribute "${name}" of ${at.item}`, reason: 'the value is not true/false, a number or a text' });
  }
  const withAttributes = (shapes: Annotation[]): Annotation[] => (Object.keys(attributes).length ? shapes.map((a) => ({ ...a, attributes })) : shapes);
  const rotation = typeof rawAttributes.rotation === 'number' && Number.isFinite(rawAttributes.rotation) ? normalizeDegrees(rawAttributes.rotation) : 0;
  return withAttributes(shapesOf(annotation, className, bbox, rotation, keypointsOf, size, file, skip));
}

function shapesOf(
  annotation: CocoAnnotation,
  className: string,
  bbox: { x: number; y: number; width: number; height: number } | null,
  rotation: number,
  keypointsOf: Map<number, number>,
  size: { width: number; height: number },
  file: string,
  skip: (type: string, reason: string) => void,
): Annotation[] {
  const keypoints = keypointsShape(annotation, className, keypointsOf.get(annotation.category_id), bbox, skip);
  const seg = annotation.segmentation;
  let outline: Annotation | null = null;
  if (seg && !Array.isArray(seg)) {
    let rle: Rle | null = null;
    let problem: string | null = 'size must be [height, width]';
    try {
      if (typeof seg === 'object' && Array.isArray(seg.size)) rle = { size: seg.size, counts: typeof seg.counts === 'string' ? decodeCompressedCounts(seg.counts) : seg.counts };
      problem = rle ? rleProblem(rle, size.height, size.width) : problem;
    } catch (error) {
      if (!(error instanceof FormatError)) throw error;
      problem = error.message;
    }
    if (problem) {
      skip('mask', `its RLE ${problem}`);
      return keypoints ? [keypoints] : [];
    }
    outline = { type: 'mask', className, geometry: annotation.iscrowd === 1 ? ({ rle, crowd: true } as { rle: Rle }) : { rle: rle! } };
  } else if (Array.isArray(seg) && seg.length > 0) {
    const rings = (typeof seg[0] === 'number' ? [seg] : seg) as number[][];
    const parts: Point[][] = [];
    for (const ring of rings) {
      if (!Array.isArray(ring) || ring.length < 6 || ring.length % 2 !== 0 || ring.some((v) => !Number.isFinite(v))) {
        throw new FormatError(`${file}: annotation ${annotation.id ?? '?'}: a polygon needs at least 3 numeric x, y pairs`);
      }
      const points = openRing(toPoints(ring));
      if (points.length >= 3) parts.push(points);
    }
    // A rotated box (attributes.rotation, as we and CVAT write it) is its four corners; one polygon that is exactly
    // a rectangle is a box some tool saved as a polygon; several polygons are one object.
    const rotated = rotation && parts.length === 1 && parts[0].length === 4 ? quadToBox(parts[0]) : null;
    const box = rotated ?? (parts.length === 1 ? rectangleOf(parts[0]) : null);
    if (box) outline = keypoints ? null : { type: 'bbox', className, geometry: box };
    else if (parts.length > 0) outline = { type: 'polygon', className, geometry: parts.length === 1 ? { points: parts[0] } : { points: parts[0], parts } };
  }
  if (keypoints && outline) {
    // The person's outline and its keypoints are one object: two shapes in one group.
    const groupId = annotation.id ?? 0;
    return [{ ...keypoints, groupId }, { ...outline, groupId }];
  }
  if (keypoints) return [keypoints];
  if (outline) return [outline];
  if (!bbox) {
    throw new FormatError(`${file}: annotation ${annotation.id ?? '?'} has neither a segmentation nor a valid bbox [x, y, width, height]`);
  }
  // CVAT's COCO export: the box before rotation, and the rotation as an attribute.
  return [{ type: 'bbox', className, geometry: rotation ? { ...bbox, rotation } : bbox }];
}

function validBox(bbox: unknown): { x: number; y: number; width: number; height: number } | null {
  if (!Array.isArray(bbox) || bbox.length !== 4 || bbox.some((v) => typeof v !== 'number' || !Number.isFinite(v))) return null;
  const [x, y, width, height] = bbox as number[];
  return width > 0 && height > 0 ? { x, y, width, height } : null;
}

/**
 * The keypoints of an annotation as a shape, or null when it has none labelled (an annotation of a keypoint category
 * with `num_keypoints: 0` is an ordinary box or outline). A list that does not match its category is skipped.
 */
function keypointsShape(
  annotation: CocoAnnotation,
  className: string,
  expected: number | undefined,
  bbox: { x: number; y: number; width: number; height: number } | null,
  skip: (type: string, reason: string) => void,
): Annotation | null {
  const raw = annotation.keypoints;
  if (!Array.isArray(raw) || raw.length === 0) return null;
  if (!raw.some((v, i) => i % 3 === 2 && v > 0)) return null;
  if (expected === undefined) {
    skip('keypoints', `its category ${annotation.category_id} declares no keypoint names`);
    return null;
  }
  if (raw.length !== expected * 3) {
    skip('keypoints', `it has ${raw.length} keypoint values; its category's ${expected} points need ${expected * 3}`);
    return null;
  }
  const points: Keypoint[] = new Array(expected);
  for (let k = 0; k < expected; k++) {
    const [x, y, v] = [raw[3 * k], raw[3 * k + 1], raw[3 * k + 2]];
    if (v !== 0 && v !== 1 && v !== 2) {
      skip('keypoints', `keypoint ${k + 1} has visibility ${JSON.stringify(v)} (COCO: 0, 1 or 2)`);
      return null;
    }
    points[k] = v === 0 ? [0, 0, 0] : [x, y, v];
  }
  return { type: 'keypoints', className, geometry: bbox ? { points, bbox } : { points } };
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
 * beside it, or to the dataset root; names that climb out of the dataset are refused; null when it is not there.
 */
async function locateImage(root: string, file: string, fileName: string, imageDirs: string[] = []): Promise<string | null> {
  const clean = fileName.replace(/\\/g, '/');
  if (clean.startsWith('/') || clean.split('/').includes('..')) {
    throw new FormatError(`${file}: image file_name "${fileName}" leaves the dataset folder`);
  }
  const jsonDir = join(root, dirname(file));
  const base = clean.split('/').pop()!;
  const candidates = [join(jsonDir, clean), join(jsonDir, 'images', clean), join(root, clean), join(root, 'images', clean), join(jsonDir, base), ...imageDirs.map((dir) => join(root, dir, clean))];
  for (const candidate of candidates) if (await exists(candidate)) return candidate;
  return null;
}

function splitOfPath(fileName: string): Split | null {
  const parts = fileName.split('/');
  for (const part of parts.slice(0, -1)) {
    const split = splitFromName(part);
    if (split) return split;
  }
  return null;
}
