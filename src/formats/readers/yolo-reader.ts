import { readFile } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseSkeleton, type Skeleton } from '../../imaging/class-specs.js';
import type { Keypoint } from '../../imaging/geometry.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, Point, ProjectType, Split } from '../dataset.js';
import { isImageName, stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { openRing, quadToBox } from '../geometry.js';
import { orderedMap } from '../ordered-map.js';
import { exists, imageSize, isDirectory, listDir } from './files.js';

export const YOLO_YAML_NAMES = ['data.yaml', 'data.yml', 'dataset.yaml', 'dataset.yml'];

interface SplitFolder {
  split: Split | null;
  images: string;
  labels: string;
}

const SPLIT_KEYS: [string, Split][] = [
  ['train', 'train'],
  ['val', 'valid'],
  ['valid', 'valid'],
  ['test', 'test'],
];

/** How many label files are read up front to tell a detection set from a segmentation set. */
const TYPE_SAMPLE_FILES = 500;

/**
 * YOLO (Ultralytics / Roboflow "YOLOv5…v11"): `data.yaml` with `names` (list or index map) and split image folders;
 * each image has `labels/<stem>.txt` with `class cx cy w h` (box) or `class x1 y1 … xn yn` (polygon) lines, all
 * normalised to [0, 1]. A missing or empty label file means an unannotated image. Pose sets (`kpt_shape: [k, 2|3]`,
 * `flip_idx`, `kpt_names`) have `class cx cy w h px py [v] …` lines → keypoints with their box, every class with the
 * skeleton (flip pairs from `flip_idx`; no edges: YOLO has none). OBB sets (every longer line holds exactly four
 * corners, `class x1 y1 … x4 y4`, DOTA's clockwise order) → rotated boxes (a quad that is not a rectangle stays a
 * polygon). Lines naming a class index past `names`, and label files without their image, are skipped through the
 * ledger.
 */
export async function readYolo(root: string, resolved?: { config: Record<string, unknown>; source: string }): Promise<DatasetSource> {
  let config: Record<string, unknown>;
  let yamlName: string;
  if (resolved) {
    ({ config, source: yamlName } = resolved);
  } else {
    const found = (await Promise.all(YOLO_YAML_NAMES.map(async (n) => ((await exists(join(root, n))) ? n : null)))).find(Boolean);
    if (!found) throw new FormatError('YOLO dataset needs a data.yaml at its root');
    yamlName = found;
    config = await readYoloYaml(root, yamlName);
  }
  const classes = classNames(config, yamlName);
  const folders = await splitFolders(root, config);
  if (folders.length === 0) throw new FormatError(`${yamlName} names no image folder that exists in the dataset`);
  const ledger = new ImportLedger();
  const pose = poseOf(config, classes, yamlName);
  const kind = pose ? 'pose' : await labelKind(folders);
  const options: LabelOptions = { pose: pose ?? undefined, obb: kind === 'obb', ledger };
  const projectType: ProjectType = kind === 'pose' ? 'keypoint_detection' : kind === 'obb' ? 'oriented_detection' : kind === 'segment' ? 'instance_segmentation' : 'object_detection';
  const classSpecs = new Map<string, ClassSpec>();
  if (pose) for (const name of classes) classSpecs.set(name, { skeleton: pose.skeletons.get(name)! });
  // Frames of a video keep their shapes' track ids beside the labels (see tracksPath): every class then has the attribute.
  const tracked = new Set<SplitFolder>();
  for (const folder of folders) if (await isDirectory(tracksPath(folder.labels) ?? '')) tracked.add(folder);
  if (tracked.size > 0) for (const name of classes) classSpecs.set(name, { ...classSpecs.get(name), attributes: [{ name: 'track_id', type: 'number' }] });

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const folder of folders) {
      const { files } = await listDir(folder.images);
      yield* orderedMap(files.filter(isImageName), 16, async (fileName) => {
        const path = join(folder.images, fileName);
        const size = await imageSize(path);
        const labelPath = join(folder.labels, `${stemOf(fileName)}.txt`);
        const text = await readFile(labelPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return '';
          throw error;
        });
        const where = `${folder.split ?? 'labels'}/${stemOf(fileName)}.txt`;
        const ids = tracked.has(folder) ? await readFile(tracksPath(labelPath)!, 'utf8').catch(() => '') : '';
        return {
          split: folder.split,
          fileName,
          source: { path },
          ...size,
          annotations: parseLabels(text, classes, size.width, size.height, where, { ...options, trackIds: ids.split(/\r?\n/) }),
        };
      });
      // Label files whose image is not in the folder: their objects are accounted for, not dropped.
      if (!(await isDirectory(folder.labels))) continue;
      const stems = new Set(files.filter(isImageName).map(stemOf));
      for (const file of (await listDir(folder.labels)).files) {
        if (!file.endsWith('.txt') || stems.has(stemOf(file))) continue;
        const lines = (await readFile(join(folder.labels, file), 'utf8')).split(/\r?\n/);
        lines.forEach((line, i) => {
          if (line.trim() === '') return;
          ledger.skip('annotations', lineType(line, options), { file: `${folder.split ?? 'labels'}/${file}`, item: `line ${i + 1}`, reason: `no image named ${stemOf(file)}.* is in the images folder` });
        });
      }
    }
  }
  return { format: 'yolo', projectType, classes, classSpecs, ledger, items };
}

/** Ultralytics pose: `kpt_shape: [k, 2|3]`, `flip_idx` (the index each point takes under a horizontal flip), and the
 * point names by class (`kpt_names`, Ultralytics 8.3; else `0`, `1`…). YOLO has no skeleton edges: none are read. */
interface PoseShape {
  k: number;
  dims: 2 | 3;
  skeletons: Map<string, Skeleton>;
}

function poseOf(config: Record<string, unknown>, classes: string[], yamlName: string): PoseShape | null {
  const shape = config.kpt_shape;
  if (shape === undefined || shape === null) return null;
  if (!Array.isArray(shape) || shape.length !== 2 || !Number.isInteger(shape[0]) || shape[0] < 1 || (shape[1] !== 2 && shape[1] !== 3)) {
    throw new FormatError(`${yamlName}: kpt_shape must be [number of keypoints, 2 or 3], got ${JSON.stringify(shape)}`);
  }
  const k = shape[0] as number;
  const flip = config.flip_idx;
  const flipPairs: [number, number][] = [];
  if (flip !== undefined && flip !== null) {
    if (!Array.isArray(flip) || flip.length !== k || !flip.every((i) => Number.isInteger(i) && i >= 0 && i < k) || flip.some((j, i) => flip[j] !== i)) {
      throw new FormatError(`${yamlName}: flip_idx must list ${k} point indices, each point's mirror (a permutation that swaps pairs)`);
    }
    flip.forEach((j: number, i: number) => {
      if (j > i) flipPairs.push([i, j]);
    });
  }
  const namesByClass = config.kpt_names as Record<string, unknown> | unknown[] | undefined;
  const skeletons = new Map<string, Skeleton>();
  classes.forEach((name, index) => {
    const declared = Array.isArray(namesByClass) ? namesByClass : namesByClass && typeof namesByClass === 'object' ? namesByClass[index] : undefined;
    const points = Array.isArray(declared) && declared.length === k && new Set(declared.map(String)).size === k ? declared.map(String) : Array.from({ length: k }, (_, i) => String(i));
    try {
      skeletons.set(name, parseSkeleton({ points, edges: [], flip_pairs: flipPairs }));
    } catch (error) {
      throw new FormatError(`${yamlName}: keypoints of class "${name}": ${(error as Error).message}`);
    }
  });
  return { k, dims: shape[1] as 2 | 3, skeletons };
}

/** Parses a data.yaml (path relative to the root). */
export async function readYoloYaml(root: string, yamlName: string): Promise<Record<string, unknown>> {
  let config: Record<string, unknown>;
  try {
    config = parseYaml(await readFile(join(root, yamlName), 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new FormatError(`${yamlName} is not valid YAML: ${(error as Error).message}`);
  }
  if (!config || typeof config !== 'object') throw new FormatError(`${yamlName} must be a mapping`);
  return config;
}

function classNames(config: Record<string, unknown>, yamlName: string): string[] {
  const names = config.names;
  let classes: string[];
  if (Array.isArray(names)) {
    classes = names.map((n) => String(n));
  } else if (names && typeof names === 'object') {
    const entries = Object.entries(names as Record<string, unknown>);
    classes = [];
    for (const [key, value] of entries) {
      const index = Number(key);
      if (!Number.isInteger(index) || index < 0 || index >= entries.length) {
        throw new FormatError(`${yamlName}: names keys must be the indices 0…${entries.length - 1}, got "${key}"`);
      }
      classes[index] = String(value);
    }
  } else {
    throw new FormatError(`${yamlName} has no "names" list`);
  }
  if (classes.length === 0) throw new FormatError(`${yamlName} lists no class names`);
  if (typeof config.nc === 'number' && config.nc !== classes.length) {
    throw new FormatError(`${yamlName}: nc is ${config.nc} but names lists ${classes.length} classes`);
  }
  if (new Set(classes).size !== classes.length) throw new FormatError(`${yamlName}: class names must be unique`);
  return classes;
}

/**
 * Resolves the split image folders. Roboflow writes `../train/images` (relative to a parent folder Ultralytics
 * assumes), so a path that does not exist as written is retried without its leading `../`, then the two common
 * layouts (`train/images`, `images/train`) are tried. Nothing outside the dataset root is ever read.
 */
async function splitFolders(root: string, config: Record<string, unknown>): Promise<SplitFolder[]> {
  const base = typeof config.path === 'string' ? safeRelative(config.path) : '';
  const found: SplitFolder[] = [];
  const seen = new Set<string>();
  for (const [key, split] of SPLIT_KEYS) {
    if (found.some((f) => f.split === split)) continue;
    const candidates: string[] = [];
    const value = config[key];
    for (const declared of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      if (typeof declared !== 'string') continue;
      const relative = safeRelative(declared);
      candidates.push(posix.join(base, relative), relative);
    }
    candidates.push(`${key}/images`, `images/${key}`);
    for (const candidate of candidates) {
      const images = join(root, candidate);
      if (seen.has(images) || !(await isDirectory(images))) continue;
      seen.add(images);
      found.push({ split, images, labels: labelsFolder(images) });
      break;
    }
  }
  if (found.length === 0 && (await isDirectory(join(root, 'images')))) {
    found.push({ split: null, images: join(root, 'images'), labels: join(root, 'labels') });
  }
  return found;
}

/** A yaml path made relative to the dataset root: leading `../`, `./` and `/` dropped; `..` elsewhere refused. */
function safeRelative(path: string): string {
  const parts = path.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
  while (parts[0] === '..') parts.shift();
  if (parts.includes('..')) throw new FormatError(`data.yaml path "${path}" leaves the dataset folder`);
  return parts.join('/');
}

/** Ultralytics' rule: the labels folder is the images folder with its last `images` segment replaced. */
function labelsFolder(images: string): string {
  const parts = images.split('/');
  const index = parts.lastIndexOf('images');
  if (index < 0) return join(images, '..', 'labels', basename(images));
  parts[index] = 'labels';
  return parts.join('/');
}

/**
 * Where a label file's track ids are (`labels/…/x.txt` → `tracks/…/x.txt`, the last `labels` folder renamed), or null:
 * a frame's label file keeps Ultralytics' five columns, and its line n's track id (MOT's -1 for a line in no track)
 * is line n of this file, written only for frames with tracked shapes.
 */
export function tracksPath(labelPath: string): string | null {
  const parts = labelPath.split('/');
  const index = parts.lastIndexOf('labels');
  if (index < 0) return null;
  parts[index] = 'tracks';
  return parts.join('/');
}

/**
 * What the label files hold, from a sample: `obb` when every line with more than a box holds exactly four corners
 * (Ultralytics OBB, `class x1 y1 … x4 y4`), `segment` when some hold other polygons, else `detect`.
 */
async function labelKind(folders: SplitFolder[]): Promise<'detect' | 'segment' | 'obb'> {
  let read = 0;
  let quads = 0;
  for (const folder of folders) {
    if (!(await isDirectory(folder.labels))) continue;
    const { files } = await listDir(folder.labels);
    for (const file of files) {
      if (!file.endsWith('.txt')) continue;
      const text = await readFile(join(folder.labels, file), 'utf8');
      for (const line of text.split('\n')) {
        const n = line.trim().split(/\s+/).length;
        if (n === 9) quads++;
        else if (n >= 7) return 'segment';
      }
      if (++read >= TYPE_SAMPLE_FILES) break;
    }
  }
  return quads > 0 ? 'obb' : 'detect';
}

/** How a label file's lines are read beyond boxes and polygons. */
export interface LabelOptions {
  pose?: { k: number; dims: 2 | 3 };
  /** Four-corner lines are oriented boxes (a rectangle → a rotated box; another quadrilateral stays a polygon). */
  obb?: boolean;
  /** Lines that name a class the names do not list are skipped through it (without one they are an error). */
  ledger?: ImportLedger;
  /** Where the class names come from, for the reason a line is skipped (default `data.yaml names`). */
  namesFrom?: string;
  /** Line n's track id (tracksPath), kept as the `track_id` attribute of its shape; -1 or nothing: in no track. */
  trackIds?: readonly string[];
}

function lineType(line: string, options: LabelOptions): string {
  const n = line.trim().split(/\s+/).length - 1;
  if (n === 4) return 'bbox';
  if (options.pose && n === 4 + options.pose.k * options.pose.dims) return 'keypoints';
  return options.obb && n === 8 ? 'bbox' : 'polygon';
}

/**
 * Parses one label file. Five values are always a box, also inside segmentation sets where some tools write plain
 * box lines; an odd count of at least seven is a polygon, closed or open (a repeated first point is dropped).
 */
export function parseLabels(text: string, classes: string[], width: number, height: number, where: string, options: LabelOptions = {}): Annotation[] {
  const annotations: Annotation[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const fields = line.split(/\s+/);
    const at = `${where} line ${i + 1}`;
    const classIndex = Number(fields[0]);
    if (!Number.isInteger(classIndex) || classIndex < 0 || classIndex >= classes.length) {
      if (options.ledger && Number.isInteger(classIndex)) {
        options.ledger.skip('annotations', lineType(line, options), { file: where, item: `line ${i + 1}`, reason: `class index ${fields[0]} is not one of 0…${classes.length - 1} (${options.namesFrom ?? 'data.yaml names'})` });
        continue;
      }
      throw new FormatError(`${at}: class index "${fields[0]}" is not one of 0…${classes.length - 1}`);
    }
    const values = fields.slice(1).map(Number);
    if (values.some((v) => !Number.isFinite(v))) throw new FormatError(`${at}: coordinates must be numbers`);
    const className = classes[classIndex];
    if (values.length === 4) {
      const [cx, cy, w, h] = values;
      if (w <= 0 || h <= 0) throw new FormatError(`${at}: box width and height must be positive`);
      annotations.push({
        type: 'bbox',
        className,
        geometry: { x: (cx - w / 2) * width, y: (cy - h / 2) * height, width: w * width, height: h * height },
      });
    } else if (options.pose && values.length === 4 + options.pose.k * options.pose.dims) {
      annotations.push(poseAnnotation(values, className, width, height, options.pose, at));
    } else if (options.obb && values.length === 8) {
      const quad: Point[] = [];
      for (let k = 0; k < 8; k += 2) quad.push([values[k] * width, values[k + 1] * height]);
      const box = quadToBox(quad);
      annotations.push(box ? { type: 'bbox', className, geometry: box } : { type: 'polygon', className, geometry: { points: quad } });
    } else if (values.length >= 6 && values.length % 2 === 0) {
      const points: Point[] = [];
      for (let k = 0; k < values.length; k += 2) points.push([values[k] * width, values[k + 1] * height]);
      const ring = openRing(points);
      if (ring.length < 3) throw new FormatError(`${at}: a polygon needs at least 3 distinct points`);
      annotations.push({ type: 'polygon', className, geometry: { points: ring } });
    } else {
      throw new FormatError(`${at}: expected "class cx cy w h" or "class x1 y1 x2 y2 x3 y3 …", got ${fields.length} values`);
    }
    const trackId = Number(options.trackIds?.[i] || -1);
    if (Number.isInteger(trackId) && trackId >= 0) annotations[annotations.length - 1].attributes = { track_id: trackId };
  }
  return annotations;
}

/**
 * A pose line: the box (`cx cy w h`) and k points (`px py [v]`), normalised. Visibility as COCO (0 not labelled, 1
 * occluded, 2 visible); with 2 dims a point at (0, 0) is not labelled and any other is visible.
 */
function poseAnnotation(values: number[], className: string, width: number, height: number, pose: { k: number; dims: 2 | 3 }, at: string): Annotation {
  const [cx, cy, w, h] = values;
  const points: Keypoint[] = new Array(pose.k);
  for (let k = 0; k < pose.k; k++) {
    const x = values[4 + k * pose.dims];
    const y = values[5 + k * pose.dims];
    const v = pose.dims === 3 ? values[6 + k * pose.dims] : x === 0 && y === 0 ? 0 : 2;
    if (v !== 0 && v !== 1 && v !== 2) throw new FormatError(`${at}: keypoint ${k + 1} has visibility ${v} (0, 1 or 2)`);
    points[k] = v === 0 ? [0, 0, 0] : [x * width, y * height, v];
  }
  const bbox = w > 0 && h > 0 ? { x: (cx - w / 2) * width, y: (cy - h / 2) * height, width: w * width, height: h * height } : undefined;
  // A person with no point labelled (COCO's num_keypoints 0, as Ultralytics converts it) is its box.
  if (bbox && points.every((p) => p[2] === 0)) return { type: 'bbox', className, geometry: bbox };
  return { type: 'keypoints', className, geometry: bbox ? { points, bbox } : { points } };
}
