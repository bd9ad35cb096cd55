import { readFile } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Annotation, DatasetItem, DatasetSource, Point, Split } from '../dataset.js';
import { isImageName, stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { openRing } from '../geometry.js';
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
 * normalised to [0, 1]. A missing or empty label file means an unannotated image.
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
  const projectType = (await hasPolygons(folders)) ? 'instance_segmentation' : 'object_detection';

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
        return {
          split: folder.split,
          fileName,
          source: { path },
          ...size,
          annotations: parseLabels(text, classes, size.width, size.height, where),
        };
      });
    }
  }
  return { format: 'yolo', projectType, classes, items };
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

async function hasPolygons(folders: SplitFolder[]): Promise<boolean> {
  let read = 0;
  for (const folder of folders) {
    if (!(await isDirectory(folder.labels))) continue;
    const { files } = await listDir(folder.labels);
    for (const file of files) {
      if (!file.endsWith('.txt')) continue;
      const text = await readFile(join(folder.labels, file), 'utf8');
      if (text.split('\n').some((line) => line.trim().split(/\s+/).length >= 7)) return true;
      if (++read >= TYPE_SAMPLE_FILES) return false;
    }
  }
  return false;
}

/**
 * Parses one label file. Five values are always a box, also inside segmentation sets where some tools write plain
 * box lines; an odd count of at least seven is a polygon, closed or open (a repeated first point is dropped).
 */
export function parseLabels(text: string, classes: string[], width: number, height: number, where: string): Annotation[] {
  const annotations: Annotation[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const fields = line.split(/\s+/);
    const at = `${where} line ${i + 1}`;
    const classIndex = Number(fields[0]);
    if (!Number.isInteger(classIndex) || classIndex < 0 || classIndex >= classes.length) {
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
    } else if (values.length >= 6 && values.length % 2 === 0) {
      const points: Point[] = [];
      for (let k = 0; k < values.length; k += 2) points.push([values[k] * width, values[k + 1] * height]);
      const ring = openRing(points);
      if (ring.length < 3) throw new FormatError(`${at}: a polygon needs at least 3 distinct points`);
      annotations.push({ type: 'polygon', className, geometry: { points: ring } });
    } else {
      throw new FormatError(`${at}: expected "class cx cy w h" or "class x1 y1 x2 y2 x3 y3 …", got ${fields.length} values`);
    }
  }
  return annotations;
}
