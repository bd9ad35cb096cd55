import type { DatasetLimits } from './coco-reader.js';
import { open } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Annotation, ProjectType, Split } from '../dataset.js';
import { isImageName, splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { walk } from './files.js';

/** Most files a dataset folder may hold before layout detection gives up (an archive is limited far below this). */
const MAX_FILES = 2_000_000;

/** Every file of a dataset folder (relative paths, `/` separators, sorted), with its images indexed by base name. */
export interface DatasetScan {
  root: string;
  files: string[];
  images: string[];
  imagesByName: Map<string, string[]>;
  /** What a reader may hold for one archive (COCO honours it; see DatasetLimits). */
  limits?: DatasetLimits;
}

export async function scanDataset(root: string): Promise<DatasetScan> {
  const files: string[] = [];
  for await (const path of walk(root)) {
    files.push(path);
    if (files.length > MAX_FILES) throw new FormatError(`the dataset holds more than ${MAX_FILES} files`);
  }
  const images = files.filter(isImageName);
  const imagesByName = new Map<string, string[]>();
  for (const path of images) {
    const name = path.split('/').pop()!;
    const list = imagesByName.get(name);
    if (list) list.push(path);
    else imagesByName.set(name, [path]);
  }
  return { root, files, images, imagesByName };
}

/** The first `bytes` of a file as text (enough to tell which tool wrote a JSON or XML document). */
export async function head(path: string, bytes = 65536): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The image a reference in an annotation file points to, as a path relative to the root. The reference may be a
 * relative path, an absolute path or URL from the tool's server (only its tail is used); `preferDirs` are tried
 * first; then the base name anywhere in the dataset when it is unique. Never leaves the dataset.
 */
export function findImage(scan: DatasetScan, reference: string, preferDirs: string[] = []): string | null {
  // Label Studio's local storage serves files as `/data/local-files/?d=<path>`: the path is in the query.
  const local = /[?&]d=([^&#]+)/.exec(reference);
  const target = local ? decodeURIComponent(local[1]) : reference;
  const clean = target.replace(/\\/g, '/').replace(/[?#].*$/, '').replace(/^[a-z]+:\/\/[^/]*/i, '');
  const parts = clean.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..') || parts.length === 0) return null;
  const wanted = parts.join('/');
  const known = new Set(scan.images);
  for (const dir of preferDirs) {
    const candidate = posix.join(dir, wanted);
    if (known.has(candidate)) return candidate;
  }
  // Longest tail of the reference that is a path in the dataset (`/data/upload/3/a.jpg` → `a.jpg`).
  for (let i = 0; i < parts.length; i++) {
    const tail = parts.slice(i).join('/');
    if (known.has(tail)) return tail;
    for (const dir of preferDirs) if (known.has(posix.join(dir, tail))) return posix.join(dir, tail);
  }
  const name = parts[parts.length - 1];
  // Label Studio names uploads `<8 hex>-<original name>`; a reference without an extension matches by stem.
  const byName = scan.imagesByName.get(name) ?? scan.imagesByName.get(name.replace(/^[0-9a-f]{8}-/, '')) ?? byStem(scan, name);
  if (byName?.length === 1) return byName[0];
  if (byName && byName.length > 1) {
    const inPreferred = byName.filter((p) => preferDirs.some((d) => p.startsWith(`${d}/`)));
    if (inPreferred.length === 1) return inPreferred[0];
  }
  return null;
}

/** The split a path's folders name (`images/val/a.jpg` → valid), nearest folder first. */
export function splitOfPath(path: string): Split | null {
  const parts = path.split('/').slice(0, -1).reverse();
  for (const part of parts) {
    const split = splitFromName(part) ?? splitFromName(part.replace(/\d{4}$/, ''));
    if (split) return split;
  }
  return null;
}

/**
 * Instance segmentation when outlines are present, semantic segmentation when masks are the only shapes, detection
 * when boxes are, else classification.
 */
export function projectTypeOf(annotations: Iterable<Annotation['type']>): ProjectType {
  const seen = new Set(annotations);
  if (seen.has('keypoints')) return 'keypoint_detection';
  if (seen.has('mask') && !seen.has('polygon') && !seen.has('bbox')) return 'semantic_segmentation';
  if (seen.has('polygon') || seen.has('mask')) return 'instance_segmentation';
  if (seen.has('bbox')) return 'object_detection';
  if (seen.has('classification')) return 'classification';
  return 'object_detection';
}

/** Adds names to an ordered class list, keeping first-seen order. */
export function addClass(classes: string[], name: string): void {
  if (!classes.includes(name)) classes.push(name);
}

export function finite(values: unknown[]): values is number[] {
  return values.every((v) => typeof v === 'number' && Number.isFinite(v));
}

function byStem(scan: DatasetScan, name: string): string[] | undefined {
  if (name.includes('.')) return undefined;
  const found = scan.images.filter((p) => {
    const file = p.split('/').pop()!;
    return file.slice(0, file.lastIndexOf('.')) === name;
  });
  return found.length ? found : undefined;
}
