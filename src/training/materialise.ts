import { copyFile, link, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { BlobStore } from '../storage/blob-store.js';
import { isSplitName, SPLIT_NAMES } from '../lib/vocabulary.js';
import { geometryBox } from '../imaging/geometry.js';

export interface MaterialImage {
  split: string;
  filename: string;
  blobKey: string;
  width: number;
  height: number;
  /** Detection: `[class_index, x, y, w, h]` in the version image's pixels. */
  boxes: [number, number, number, number, number][];
  /** Classification: the image's class index, or null when unlabelled. */
  label: number | null;
  /** Segmentation: polygons (`points` in the version image's pixels) and masks (COCO RLE), in annotation order. */
  shapes?: MaterialShape[];
}

export type MaterialShape = { class: number; points: number[][] } | { class: number; rle: { size: [number, number]; counts: number[] } };

export interface MaterialVersion {
  task: 'detect' | 'classify';
  names: string[];
  images: MaterialImage[];
}

export interface MaterialisedFolder {
  dir: string;
  counts: Record<string, number>;
  linked: number;
  copied: number;
}

/**
 * Writes a version in the layout the trainers read, without copying bytes it can link: `images/<split>/<file>` hard
 * links to the stored blobs (symlinks across file systems, copies only for stores without local files),
 * `dataset.json` (names and, per split, file, size, boxes and any polygons and masks, or label), and for Ultralytics `labels/<split>/*.txt`
 * (YOLO rows), `data.yaml`, and for classifiers `<split>/<class>/<file>` links.
 */
export async function materialiseVersion(blobs: BlobStore, version: MaterialVersion, dir: string): Promise<MaterialisedFolder> {
  await rm(dir, { recursive: true, force: true });
  const splits: Record<string, unknown[]> = { train: [], valid: [], test: [] };
  let linked = 0;
  let copied = 0;
  for (const split of SPLIT_NAMES) {
    await mkdir(join(dir, 'images', split), { recursive: true });
    if (version.task === 'detect') await mkdir(join(dir, 'labels', split), { recursive: true });
    else for (const name of version.names) await mkdir(join(dir, split, safeName(name)), { recursive: true });
  }
  for (const image of version.images) {
    if (!isSplitName(image.split)) continue;
    if (version.task === 'classify' && image.label === null) continue;
    const file = `images/${image.split}/${image.filename}`;
    const target = join(dir, file);
    const how = await place(blobs, image.blobKey, target);
    if (how === 'copied') copied++;
    else linked++;
    if (version.task === 'detect') {
      const rows = image.boxes.map(([c, x, y, w, h]) =>
        [c, (x + w / 2) / image.width, (y + h / 2) / image.height, w / image.width, h / image.height].map((v, i) => (i === 0 ? String(v) : v.toFixed(6))).join(' '));
      await writeFile(join(dir, 'labels', image.split, `${image.filename.slice(0, -extname(image.filename).length || undefined)}.txt`), rows.join('\n'));
      splits[image.split].push({ file, width: image.width, height: image.height, boxes: image.boxes, ...(image.shapes?.length ? { shapes: image.shapes } : {}) });
    } else {
      await link(target, join(dir, image.split, safeName(version.names[image.label!]), image.filename)).catch(() => copyFile(target, join(dir, image.split, safeName(version.names[image.label!]), image.filename)));
      splits[image.split].push({ file, width: image.width, height: image.height, label: image.label });
    }
  }
  await writeFile(join(dir, 'dataset.json'), JSON.stringify({ task: version.task, names: version.names, splits }));
  const yamlNames = version.names.map((n, i) => `  ${i}: ${JSON.stringify(n)}`).join('\n');
  await writeFile(join(dir, 'data.yaml'), `path: ${JSON.stringify(dir)}\ntrain: images/train\nval: images/valid\ntest: images/test\nnames:\n${yamlNames}\n`);
  const counts = Object.fromEntries(Object.entries(splits).map(([k, v]) => [k, v.length]));
  return { dir, counts, linked, copied };
}

async function place(blobs: BlobStore, key: string, target: string): Promise<'linked' | 'copied'> {
  const source = blobs.localPath?.(key) ?? null;
  if (source) {
    try {
      await link(source, target);
      return 'linked';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await symlink(source, target);
      return 'linked';
    }
  }
  await writeFile(target, await blobs.get(key));
  return 'copied';
}

/** Class names as folder names: anything outside [A-Za-z0-9 ._-] becomes `_`. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9 ._-]/g, '_').replace(/^\.+/, '_');
  return cleaned.length > 0 ? cleaned.slice(0, 100) : '_';
}

/**
 * A version annotation as a detector's box `[class_index, x, y, w, h]`, or null for a shape without an extent: open
 * paths and point sets are no objects to learn (a straight line's box would have no height), nor is anything whose
 * envelope has no area (a keypoint instance with one labelled point and no box) or a classification.
 */
export function detectorBox(classIndex: number, type: string, geometry: object): MaterialImage['boxes'][number] | null {
  if (type === 'polyline' || type === 'points') return null;
  const box = geometryBox(type, geometry);
  return box && box.width > 0 && box.height > 0 ? [classIndex, box.x, box.y, box.width, box.height] : null;
}

/** A version annotation as a trainer's shape (polygons and masks), or null for types without one. */
export function shapeOf(classIndex: number, type: string, geometry: any): MaterialShape | null {
  if (type === 'polygon' && Array.isArray(geometry.points) && geometry.points.length >= 3) return { class: classIndex, points: geometry.points };
  if (type === 'mask' && geometry.rle) return { class: classIndex, rle: { size: geometry.rle.size, counts: geometry.rle.counts } };
  return null;
}
