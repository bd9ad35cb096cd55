import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AttributeValue, Skeleton } from '../../imaging/class-specs.js';
import { specsFromValues } from '../../imaging/class-specs.js';
import { normalizeDegrees, type Keypoint, type Visibility } from '../../imaging/geometry.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { splitFromName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { openRing } from '../geometry.js';
import { ImportLedger } from '../import-ledger.js';
import { decodeCompressedCounts } from './coco-reader.js';
import { imageSize } from './files.js';
import { skipMissingImage } from './listed-images.js';
import { addClass, findImage, finite, projectTypeOf, scanDataset, type DatasetScan } from './scan.js';

interface DatumaroAnnotation {
  id?: number;
  type?: string;
  label_id?: number | null;
  group?: number;
  attributes?: Record<string, unknown>;
  bbox?: number[];
  points?: number[];
  visibility?: number[];
  rle?: { counts?: string | number[]; size?: [number, number] };
  /** A skeleton's attributes of each point (its `points` are x, y, visibility triples). */
  points_attributes?: Record<string, unknown>[];
}
interface DatumaroItem {
  id?: string;
  annotations?: DatumaroAnnotation[];
  image?: { path?: string; size?: [number, number] };
  media?: { path?: string };
  attr?: { frame?: unknown };
}
interface DatumaroDocument {
  categories?: {
    label?: { labels?: { name?: string; parent?: string; attributes?: string[] }[]; attributes?: string[] };
    points?: { items?: { label_id?: number; labels?: string[]; joints?: number[][] }[] };
  };
  items?: DatumaroItem[];
}

/** A Datumaro document: `{categories: {label: …}, items: […]}` (CVAT's "Datumaro 1.0" export, Datumaro's own). */
export function looksLikeDatumaro(head: string): boolean {
  return /^\s*\{/.test(head) && /"items"\s*:/.test(head) && /"categories"\s*:/.test(head);
}

const TYPES: Record<string, Annotation['type']> = { bbox: 'bbox', polygon: 'polygon', polyline: 'polyline', points: 'points', mask: 'mask', ellipse: 'ellipse', label: 'classification', skeleton: 'keypoints' };

/**
 * Datumaro JSON: `annotations/<subset>.json` and images under `images/<subset>/` (or `images/`).
 * - `bbox` [x, y, w, h] → bbox; the `rotation` attribute CVAT writes (degrees clockwise about the centre) → its angle.
 * - `polygon` (flat points) → polygon; polygons of one label in one `group` (≠ 0) with the same attributes → one
 *   object in several parts (CVAT and Datumaro split a multi-part object that way).
 * - `polyline` → polyline; `ellipse` (points = the corners of its box before rotation, the `rotation` attribute) →
 *   ellipse; `mask` (COCO RLE) → mask; `label` → classification.
 * - `points`: when the label has a `points` category (its point names and `joints`) with as many names as the
 *   annotation has points → keypoints (visibility 0 absent, 1 hidden, 2 visible, as COCO) of the class's skeleton;
 *   joints are 1-based as COCO writes them (0-based when one of them is 0). A `bbox` of the same label in the same
 *   group becomes the instance's box. Other points → a point set.
 * - `group` → group id; `attributes` (true/false, numbers, text) → attributes, declared on the class from the values
 *   seen (the `occluded` etc. CVAT adds included); values that are objects or lists are skipped through the ledger.
 * - `skeleton` → keypoints of the label's skeleton (its `points` category): `points` as x, y, visibility triples in
 *   the skeleton's order with `points_attributes` (cvat-ai/datumaro since 2024, which CVAT's export uses).
 *   Sublabels (labels whose `parent` is a skeleton's label) are point names, not classes; attributes of single
 *   points (Versa keeps none per point; `occluded`, `outside`, `keyframe` are the visibility) go to the ledger.
 * - `caption`, `cuboid_3d` and every other type → skipped through the ledger with the reason; so are items whose
 *   image is not in the archive, with their annotations.
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
  const skeletons = new Map<string, Skeleton>();
  const seen = new Map<string, Map<string, Set<AttributeValue>>>();
  for (const { doc } of docs) {
    const labels = labelNames(doc);
    for (const entry of doc.categories?.points?.items ?? []) {
      const name = labels[entry.label_id ?? -1];
      const points = (entry.labels ?? []).map(String);
      if (!name || points.length === 0 || skeletons.has(name)) continue;
      const joints = (entry.joints ?? []).filter((j) => Array.isArray(j) && j.length === 2 && finite(j));
      const base = joints.some((j) => j[0] === 0 || j[1] === 0) ? 0 : 1;
      const edges = joints.map(([a, b]) => [a - base, b - base] as [number, number]).filter(([a, b]) => a >= 0 && b >= 0 && a < points.length && b < points.length && a !== b);
      skeletons.set(name, { points, edges, flip_pairs: [] });
    }
    const parents = (doc.categories?.label?.labels ?? []).map((l) => String(l.parent ?? '').trim());
    labels.forEach((name, i) => {
      if (name && !skeletons.has(parents[i])) addClass(classes, name);
    });
    for (const item of doc.items ?? []) for (const a of item.annotations ?? []) {
      const type = TYPES[a.type ?? ''];
      const name = labels[a.label_id ?? -1];
      if (type) types.push(type === 'points' && name && skeletons.has(name) ? 'keypoints' : type);
      if (!name) continue;
      for (const [key, value] of Object.entries(a.attributes ?? {})) {
        if (key === 'rotation' && (a.type === 'bbox' || a.type === 'ellipse')) continue;
        if (!isAttributeValue(value)) continue;
        const perClass = seen.get(name) ?? new Map<string, Set<AttributeValue>>();
        seen.set(name, perClass);
        const values = perClass.get(key) ?? new Set<AttributeValue>();
        perClass.set(key, values);
        values.add(value);
      }
    }
  }
  const classSpecs = new Map<string, ClassSpec>();
  for (const name of classes) {
    const skeleton = skeletons.get(name);
    const attributes = seen.get(name) ? specsFromValues(seen.get(name)!) : undefined;
    if (skeleton || attributes) classSpecs.set(name, { ...(skeleton ? { skeleton } : {}), ...(attributes ? { attributes } : {}) });
  }
  const ledger = new ImportLedger();
  let accounted = false;

  async function* items(): AsyncGenerator<DatasetItem> {
    // The ledger accounts for the files once, however often the items are read.
    const first = !accounted;
    const skip: ImportLedger['skip'] = first ? ledger.skip.bind(ledger) : () => {};
    accounted = true;
    for (const { file, subset, doc } of docs) {
      const labels = labelNames(doc);
      const imagesDir = file.split('/').slice(0, -2).concat('images').filter(Boolean).join('/');
      for (const item of doc.items ?? []) {
        const where = `${file} item "${item.id}"`;
        const reference = item.image?.path ?? item.media?.path ?? `${item.id}.jpg`;
        const found = findImage(s, reference, [`${imagesDir}/${subset}`, imagesDir]);
        const declared = item.image?.size && finite(item.image.size) ? { height: item.image.size[0], width: item.image.size[1] } : null;
        if (!found) {
          const annotations = convertItem(item, labels, skeletons, declared ?? { width: 0, height: 0 }, file, `item "${item.id}"`, skip);
          if (first) skipMissingImage(ledger, file, `"${reference}" (${where})`, annotations);
          continue;
        }
        const path = join(s.root, found);
        const size = declared ?? (await imageSize(path));
        const annotations = convertItem(item, labels, skeletons, size, file, `item "${item.id}"`, skip);
        const frame = item.attr?.frame;
        yield { split: splitFromName(subset), fileName: path.split('/').pop()!, source: { path }, ...size, annotations, ...(Number.isInteger(frame) && (frame as number) >= 0 ? { frame: frame as number } : {}) };
      }
    }
  }
  return { format: 'datumaro', projectType: projectTypeOf(types), classes, classSpecs, ledger, items };
}

function labelNames(doc: DatumaroDocument): string[] {
  return (doc.categories?.label?.labels ?? []).map((l) => String(l.name ?? '').trim());
}

const isAttributeValue = (v: unknown): v is AttributeValue => typeof v === 'boolean' || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

type Skip = ImportLedger['skip'];

/** What a skeleton point's visibility already says (CVAT writes them on each point too): not lost when dropped. */
const POINT_STATE = new Set(['occluded', 'outside', 'keyframe']);

/** A keypoint with COCO visibility (0 not labelled, 1 occluded, 2 visible; anything else visible). */
function keypoint(x: number, y: number, v: unknown): Keypoint {
  const vis: Visibility = v === 0 || v === 1 ? v : 2;
  return vis === 0 ? [0, 0, 0] : [x, y, vis];
}

type Converted = { geometry: Record<string, unknown> } | { problem: string };

/** An annotation's attributes Versa can keep (a box's or ellipse's `rotation` is its geometry); `bad(key)` for the rest. */
function attributesOf(a: DatumaroAnnotation, type: string, bad: (key: string) => void): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(a.attributes ?? {})) {
    if (key === 'rotation' && (type === 'bbox' || type === 'ellipse')) continue;
    if (isAttributeValue(value)) attributes[key] = value;
    else bad(key);
  }
  return attributes;
}

function polylineGeometry(points: Point[] | null): Converted {
  if (!points || points.length < 2) return { problem: 'a polyline needs at least 2 x, y pairs' };
  return { geometry: { points } };
}

/** Datumaro's ellipse: the two corners of its box. */
function ellipseGeometry(points: Point[] | null, rotation: number): Converted {
  if (!points || points.length !== 2) return { problem: 'an ellipse needs the two corners of its box' };
  const [[x1, y1], [x2, y2]] = points;
  if (!(Math.abs(x2 - x1) > 0 && Math.abs(y2 - y1) > 0)) return { problem: 'the ellipse has no area' };
  return { geometry: { cx: (x1 + x2) / 2, cy: (y1 + y2) / 2, rx: Math.abs(x2 - x1) / 2, ry: Math.abs(y2 - y1) / 2, rotation } };
}

/** A COCO-style rle (counts as numbers or compressed) of the image's size. */
function maskGeometry(rle: DatumaroAnnotation['rle'], size: { width: number; height: number }): Converted {
  if (!rle || !Array.isArray(rle.size) || rle.size[0] !== size.height || rle.size[1] !== size.width) return { problem: "a mask needs an rle whose size is the image's [height, width]" };
  let counts: number[] | undefined;
  try {
    counts = typeof rle.counts === 'string' ? decodeCompressedCounts(rle.counts) : rle.counts;
  } catch (error) {
    return { problem: `the rle does not decode: ${(error as Error).message}` };
  }
  if (!Array.isArray(counts)) return { problem: 'mask rle counts are missing' };
  return { geometry: { rle: { size: [size.height, size.width], counts } } };
}

function convertItem(item: DatumaroItem, labels: string[], skeletons: Map<string, Skeleton>, size: { width: number; height: number }, file: string, where: string, skip: Skip): Annotation[] {
  const out: Annotation[] = [];
  const list = item.annotations ?? [];
  // Boxes that are keypoint instances' boxes (same label, same group), by group and label.
  const keypointGroups = new Set(list.filter((a) => (a.type === 'points' || a.type === 'skeleton') && a.group && skeletons.has(labels[a.label_id ?? -1] ?? '')).map((a) => `${a.group}\u0000${a.label_id}`));
  const instanceBoxes = new Map<string, { x: number; y: number; width: number; height: number }>();
  const polygonParts = new Map<string, Annotation & { type: 'polygon' }>();
  /** Keypoint instances waiting for their group's box (the box may come after them). */
  const pendingBoxes: (() => void)[] = [];
  list.forEach((a, index) => {
    const type = a.type ?? '(no type)';
    /** A keypoint instance, boxed by the bbox of its label in its group. */
    const instance = (keypoints: Keypoint[]) => {
      if (!keypoints.some((p) => p[2] > 0)) return problem('no keypoint of the instance is labelled');
      const annotation: Annotation & { type: 'keypoints' } = { type: 'keypoints', ...extras, geometry: { points: keypoints } };
      out.push(annotation);
      const boxKey = `${a.group}\u0000${a.label_id}`;
      pendingBoxes.push(() => {
        const bbox = instanceBoxes.get(boxKey);
        if (bbox) annotation.geometry.bbox = bbox;
      });
    };
    const item = `${where} annotation ${a.id ?? index + 1} (${type})`;
    const vtype = TYPES[type];
    if (!vtype) return skip('annotations', type, { file, item, reason: `Versa has no shape for Datumaro's ${type}` });
    const className = labels[a.label_id ?? -1];
    if (a.label_id === undefined || a.label_id === null || !className) {
      return skip('annotations', vtype, { file, item, reason: a.label_id === undefined || a.label_id === null ? 'the annotation has no label' : `label_id ${a.label_id} is not in the label categories` });
    }
    const problem = (reason: string) => skip('annotations', vtype, { file, item, reason });
    const attributes = attributesOf(a, type, (key) => skip('attributes', '', { file, item: `attribute "${key}" of ${item}`, reason: 'the value is not true/false, a number or a text' }));
    const extras = { className, ...(Object.keys(attributes).length > 0 ? { attributes } : {}), ...(a.group ? { groupId: a.group } : {}) };
    const rotationAttr = a.attributes?.rotation;
    const rotation = normalizeDegrees(typeof rotationAttr === 'number' && Number.isFinite(rotationAttr) ? rotationAttr : 0);
    const pairs = (): Point[] | null => {
      if (!Array.isArray(a.points) || a.points.length % 2 !== 0 || !finite(a.points)) return null;
      const points: Point[] = [];
      for (let i = 0; i < a.points.length; i += 2) points.push([a.points[i], a.points[i + 1]]);
      return points;
    };
    switch (type) {
      case 'label':
        out.push({ type: 'classification', ...extras, geometry: {} });
        return;
      case 'bbox': {
        if (!Array.isArray(a.bbox) || a.bbox.length !== 4 || !finite(a.bbox) || a.bbox[2] <= 0 || a.bbox[3] <= 0) return problem('a bbox needs [x, y, width, height] with a positive size');
        const [x, y, width, height] = a.bbox;
        if (keypointGroups.has(`${a.group}\u0000${a.label_id}`) && rotation === 0) {
          instanceBoxes.set(`${a.group}\u0000${a.label_id}`, { x, y, width, height });
          return;
        }
        out.push({ type: 'bbox', ...extras, geometry: rotation ? { x, y, width, height, rotation } : { x, y, width, height } });
        return;
      }
      case 'polygon': {
        const points = pairs();
        if (!points || points.length < 3) return problem('a polygon needs at least 3 x, y pairs');
        const ring = openRing(points);
        const key = a.group ? `${a.group}\u0000${a.label_id}\u0000${JSON.stringify(attributes)}` : '';
        const whole = key ? polygonParts.get(key) : undefined;
        if (whole) {
          whole.geometry.parts = [...(whole.geometry.parts ?? [whole.geometry.points]), ring];
          return;
        }
        const created: Annotation & { type: 'polygon' } = { type: 'polygon', ...extras, geometry: { points: ring } };
        if (key) polygonParts.set(key, created);
        out.push(created);
        return;
      }
      case 'polyline':
      case 'ellipse': {
        const converted = type === 'polyline' ? polylineGeometry(pairs()) : ellipseGeometry(pairs(), rotation);
        if ('problem' in converted) return problem(converted.problem);
        out.push({ type, ...extras, geometry: converted.geometry } as Annotation);
        return;
      }
      case 'skeleton': {
        const skeleton = skeletons.get(className);
        if (!skeleton) return problem(`the label "${className}" has no skeleton (no points category names its points)`);
        const flat = a.points;
        if (!Array.isArray(flat) || flat.length !== skeleton.points.length * 3 || !finite(flat)) return problem(`a skeleton of "${className}" needs ${skeleton.points.length} x, y, visibility triples`);
        skeleton.points.forEach((name, i) => {
          for (const key of Object.keys(a.points_attributes?.[i] ?? {})) {
            if (!POINT_STATE.has(key)) skip('attributes', '', { file, item: `attribute "${key}" of point "${name}" of ${item}`, reason: 'Versa keeps no attributes per keypoint' });
          }
        });
        return instance(skeleton.points.map((_, i) => keypoint(flat[3 * i], flat[3 * i + 1], flat[3 * i + 2])));
      }
      case 'points': {
        const points = pairs();
        if (!points || points.length < 1) return problem('points need at least one x, y pair');
        const skeleton = skeletons.get(className);
        const visibility = Array.isArray(a.visibility) ? a.visibility : points.map(() => 2);
        if (skeleton && skeleton.points.length === points.length) return instance(points.map(([x, y], i) => keypoint(x, y, visibility[i])));
        // Points of a set that are absent (visibility 0) are not part of it.
        const present = points.filter((_, i) => visibility[i] !== 0);
        if (present.length < points.length) skip('annotations', 'point', { file, item, reason: 'a point marked absent (visibility 0) in a point set with no skeleton' }, points.length - present.length);
        if (present.length === 0) return problem('every point is marked absent');
        out.push({ type: 'points', ...extras, geometry: { points: present } });
        return;
      }
      case 'mask': {
        const converted = maskGeometry(a.rle, size);
        if ('problem' in converted) return problem(converted.problem);
        out.push({ type: 'mask', ...extras, geometry: converted.geometry } as Annotation);
        return;
      }
    }
  });
  for (const attach of pendingBoxes) attach();
  return out;
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
