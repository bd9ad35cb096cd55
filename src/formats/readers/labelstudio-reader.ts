import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decode as decodeRlePack } from '@thi.ng/rle-pack';
import type { AttributeValue } from '../../imaging/class-specs.js';
import { specsFromValues } from '../../imaging/class-specs.js';
import { normalizeDegrees, type Keypoint, type KeypointsGeometry } from '../../imaging/geometry.js';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, ClassSpec, DatasetItem, DatasetSource, Point } from '../dataset.js';
import { isImageName } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { openRing } from '../geometry.js';
import { ImportLedger } from '../import-ledger.js';
import { guessFlipPairs } from './coco-reader.js';
import { imageSize } from './files.js';
import { skipMissingImage } from './listed-images.js';
import { addClass, findImage, finite, projectTypeOf, scanDataset, splitOfPath, type DatasetScan } from './scan.js';

interface LsValue {
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  rotation?: number;
  radiusX?: number;
  radiusY?: number;
  points?: number[][];
  rle?: number[];
  format?: string;
  rectanglelabels?: string[];
  polygonlabels?: string[];
  brushlabels?: string[];
  keypointlabels?: string[];
  ellipselabels?: string[];
  choices?: string[];
  labels?: string[];
  text?: string[] | string;
  number?: number;
  rating?: number;
}
interface LsResult {
  id?: string;
  parentID?: string;
  /** A `relation` result's ends (region ids), direction and labels. */
  from_id?: string;
  to_id?: string;
  labels?: string[];
  type?: string;
  from_name?: string;
  original_width?: number;
  original_height?: number;
  value?: LsValue;
}
interface LsTask {
  id?: number;
  data?: Record<string, unknown>;
  annotations?: { result?: LsResult[]; was_cancelled?: boolean }[];
  completions?: { result?: LsResult[]; was_cancelled?: boolean }[];
}

/** Result types that draw a region, and the Versa type each becomes. */
const REGION_TYPES: Record<string, Annotation['type']> = {
  rectanglelabels: 'bbox',
  polygonlabels: 'polygon',
  brushlabels: 'mask',
  keypointlabels: 'points',
  ellipselabels: 'ellipse',
};
/** Result types that describe a region (when their `id` is a region's) or the image. */
const PER_REGION_TYPES = new Set(['choices', 'textarea', 'number', 'rating', 'taxonomy']);

/** A Label Studio JSON export: a list of tasks with `data` and `annotations[].result`. */
export function looksLikeLabelStudio(head: string): boolean {
  return /^\s*\[/.test(head) && /"(annotations|completions)"\s*:/.test(head) && /"(result|data)"\s*:/.test(head);
}

/**
 * Label Studio's JSON export (one file, a list of tasks). Per task the first annotation that was not cancelled is
 * used; values are in percent of the image (`original_width` × `original_height`), scaled to the image's pixels.
 * - `rectanglelabels` → bbox. Label Studio turns a rectangle `rotation` degrees clockwise about its top-left corner
 *   (x, y); Versa about its centre, so the centre is moved: centre = corner + R·(w/2, h/2), x = cx − w/2, y = cy − h/2,
 *   same angle.
 * - `polygonlabels` → polygon; `ellipselabels` (centre x, y, radiusX of the width, radiusY of the height, rotation
 *   clockwise about the centre) → ellipse.
 * - `keypointlabels` hanging (`parentID`) on a `rectanglelabels` of another label → `keypoints`: the rectangle is
 *   the instance (its class, its box) and each point's label is the point's name, as Label Studio's pose templates
 *   label points (and labelstudio-writer writes them). Label Studio's export declares no skeleton: each such class
 *   gets one of the point names in the order the instances list them (no edges; left/right flip pairs guessed from
 *   the names); a point with an `occluded` choice "true" has visibility 1, else 2; a skeleton point an instance
 *   lacks is not labelled (0).
 * - other `keypointlabels` (one point each) → `points`: the keypoints of one label that hang on the same region
 *   (`parentID`), or on none, form one point set; a point set hanging on a region gets that region's group id.
 * - `brushlabels` with `format: "rle"` → mask: Label Studio's "brush" RLE is @thi.ng/rle-pack over the RGBA layer
 *   (label-studio-converter's brush.py decodes it the same way); a pixel with alpha > 0 is in the mask.
 * - `choices`, `textarea`, `number`, `rating` whose `id` is a region's (per-region controls) → attributes of that
 *   region named after the control (`from_name`): one choice as its text, several joined with ", ", text lines joined
 *   with a newline, numbers as numbers. Image-level `choices` → classifications; image-level text and numbers have
 *   no counterpart and are skipped through the ledger, as is every result type Versa has no shape for.
 * - `relation` results (Label Studio's links between two regions) and regions hanging on another (`parentID`): the
 *   regions so linked, directly or through others, are one group (`groupId`, numbered in order of appearance); a
 *   relation's labels and direction have no place in a group and are skipped, a relation not between two regions of
 *   its task is skipped.
 * - `videorectangle` (a box tracked over a video's frames) → skipped through the ledger as a track; a task whose data
 *   names no image (a video) or whose image is not in the archive → skipped with everything it holds.
 */
export async function readLabelStudio(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files = s.files.filter((f) => f.toLowerCase().endsWith('.json'));
  const docs: { file: string; tasks: LsTask[] }[] = [];
  for (const file of files) {
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(join(root, file), 'utf8'));
    } catch {
      continue;
    }
    if (Array.isArray(doc) && doc.some((t) => t && typeof t === 'object' && 'data' in t && ('annotations' in t || 'completions' in t))) {
      docs.push({ file, tasks: doc as LsTask[] });
    }
  }
  if (docs.length === 0) throw new FormatError('no Label Studio JSON export (a list of tasks with data and annotations) found');
  const classes: string[] = [];
  const types: Annotation['type'][] = [];
  const seen = new Map<string, Map<string, Set<AttributeValue>>>();
  const skeletons = new Map<string, string[]>();
  for (const { tasks } of docs) {
    for (const task of tasks) {
      const results = resultsOf(task);
      const regionIds = new Set(results.filter((r) => r.type && r.type in REGION_TYPES && r.id).map((r) => r.id!));
      const regionClass = new Map<string, string>();
      const pose = poseInstances(results);
      const posePoints = new Set([...pose.values()].flat());
      for (const r of results) {
        const regionType = REGION_TYPES[r.type ?? ''];
        if (posePoints.has(r)) continue;
        const points = r.id ? pose.get(r.id) : undefined;
        if (points && labelsOf(r)[0]) {
          const className = labelsOf(r)[0];
          addClass(classes, className);
          types.push('keypoints');
          regionClass.set(r.id!, className);
          mergeNames(skeletons.get(className) ?? skeletons.set(className, []).get(className)!, points.map((p) => labelsOf(p)[0]));
        } else if (regionType) {
          for (const name of labelsOf(r)) addClass(classes, name);
          types.push(regionType);
          if (r.id && labelsOf(r)[0]) regionClass.set(r.id, labelsOf(r)[0]);
        } else if (r.type === 'choices' && !(r.id && regionIds.has(r.id))) {
          for (const name of labelsOf(r)) addClass(classes, name);
          types.push('classification');
        }
      }
      for (const r of results) {
        if (!PER_REGION_TYPES.has(r.type ?? '') || !r.id || !regionIds.has(r.id)) continue;
        const value = attributeValue(r);
        const className = regionClass.get(r.id);
        if (value === null || !className || !r.from_name) continue;
        const perClass = seen.get(className) ?? new Map<string, Set<AttributeValue>>();
        seen.set(className, perClass);
        const values = perClass.get(r.from_name) ?? new Set<AttributeValue>();
        perClass.set(r.from_name, values);
        values.add(value);
      }
    }
  }
  const classSpecs = new Map<string, ClassSpec>([...seen].map(([name, values]) => [name, { attributes: specsFromValues(values) }]));
  for (const [name, points] of skeletons) classSpecs.set(name, { ...classSpecs.get(name), skeleton: { points, edges: [], flip_pairs: guessFlipPairs(points) } });
  const ledger = new ImportLedger();
  let accounted = false;

  async function* items(): AsyncGenerator<DatasetItem> {
    // The ledger accounts for the files once, however often the items are read.
    const first = !accounted;
    const skip: ImportLedger['skip'] = first ? ledger.skip.bind(ledger) : () => {};
    const keep: ImportLedger['keep'] = first ? ledger.keep.bind(ledger) : () => {};
    accounted = true;
    for (const { file, tasks } of docs) {
      for (const task of tasks) {
        const where = `task ${task.id ?? '?'}`;
        const results = resultsOf(task);
        const reference = imageReference(task);
        const found = reference ? findImage(s, reference, ['images', 'upload', 'media']) : null;
        if (!found) {
          // A task of another medium (a video...) or whose image is not in the archive: accounted for, not imported.
          const r = results.find((x) => x.original_width && x.original_height);
          const lost: ImportLedger['keep'] = (kind, type = '') => skip(kind, type, { file, item: `a ${type} of ${where}`, reason: 'its image is not in the dataset' });
          const annotations = convertTask(results, { width: r?.original_width ?? 100, height: r?.original_height ?? 100 }, file, where, skip, skeletons, lost);
          const reason = reference ? undefined : `the task's data names no image (${Object.keys(task.data ?? {}).join(', ') || 'no data'}); Versa imports images`;
          if (first) skipMissingImage(ledger, file, `${reference ? `"${reference}"` : '(none)'} of ${where}`, annotations, reason);
          continue;
        }
        const path = join(s.root, found);
        const size = await imageSize(path);
        const annotations = convertTask(results, size, file, where, skip, skeletons, keep);
        yield { split: splitOfPath(path.slice(root.length + 1)), fileName: path.split('/').pop()!, source: { path }, ...size, annotations };
      }
    }
  }
  return { format: 'labelstudio', projectType: projectTypeOf(types), classes, classSpecs, ledger, items };
}

function resultsOf(task: LsTask): LsResult[] {
  const annotation = (task.annotations ?? task.completions ?? []).find((a) => !a.was_cancelled);
  return annotation?.result ?? [];
}

function labelsOf(r: LsResult): string[] {
  const v = r.value ?? {};
  const list = v.rectanglelabels ?? v.polygonlabels ?? v.brushlabels ?? v.keypointlabels ?? v.ellipselabels ?? v.choices ?? v.labels ?? [];
  return (Array.isArray(list) ? list : []).map((n) => String(n).trim()).filter(Boolean);
}

/** A per-region control's value as an attribute value, or null when it holds none. */
function attributeValue(r: LsResult): AttributeValue | null {
  const v = r.value ?? {};
  switch (r.type) {
    case 'choices': {
      const list = (v.choices ?? []).map(String);
      // A checkbox written back as choices "true"/"false" (labelstudio-writer) is a checkbox again.
      if (list.length === 1 && (list[0] === 'true' || list[0] === 'false')) return list[0] === 'true';
      return list.length === 0 ? null : list.join(', ');
    }
    case 'taxonomy': {
      const list = ((v as { taxonomy?: string[][] }).taxonomy ?? []).map((path) => (Array.isArray(path) ? path.join('/') : String(path)));
      return list.length === 0 ? null : list.join(', ');
    }
    case 'textarea': {
      const text = Array.isArray(v.text) ? v.text.map(String).join('\n') : typeof v.text === 'string' ? v.text : null;
      return text === null || text === '' ? null : text;
    }
    case 'number':
      return typeof v.number === 'number' && Number.isFinite(v.number) ? v.number : null;
    case 'rating':
      return typeof v.rating === 'number' && Number.isFinite(v.rating) ? v.rating : null;
    default:
      return null;
  }
}

function imageReference(task: LsTask): string | null {
  const data = task.data ?? {};
  if (typeof data.image === 'string') return data.image;
  for (const value of Object.values(data)) if (typeof value === 'string' && isImageName(value.replace(/[?#].*$/, ''))) return value;
  return null;
}

type Skip = ImportLedger['skip'];

/**
 * Per-region controls as attributes, by region id. A pose point's `occluded` control goes into `occluded` (its
 * visibility); any other control of a pose point, or one without `from_name`, is skipped (`skipped(item, reason)`).
 */
function regionAttributes(
  results: LsResult[],
  regionIds: ReadonlySet<string>,
  posePointIds: ReadonlySet<string | undefined>,
  occluded: Set<string>,
  skipped: (item: string, reason: string) => void,
): Map<string, Record<string, AttributeValue>> {
  const attributes = new Map<string, Record<string, AttributeValue>>();
  for (const r of results) {
    if (!PER_REGION_TYPES.has(r.type ?? '') || !r.id || !regionIds.has(r.id)) continue;
    const value = attributeValue(r);
    if (value === null) continue;
    if (posePointIds.has(r.id)) {
      // A pose point's own control: its visibility, or an attribute Versa cannot keep per point.
      if (r.from_name === 'occluded' && typeof value === 'boolean') {
        if (value) occluded.add(r.id);
      } else skipped(`result ${r.id} (${r.type} "${r.from_name ?? ''}" of a keypoint)`, 'Versa keeps no attributes per keypoint');
      continue;
    }
    if (!r.from_name) {
      skipped(`result ${r.id} (${r.type})`, 'a per-region control without from_name names no attribute');
      continue;
    }
    attributes.set(r.id, { ...attributes.get(r.id), [r.from_name]: value });
  }
  return attributes;
}

type Converted = { geometry: Record<string, unknown> } | { problem: string };

/** A rectangle in percent of the image, scaled; a rotated one turned about its centre as Versa keeps it. */
function rectangleGeometry(v: NonNullable<LsResult['value']>, sx: number, sy: number): Converted {
  if (!finite([v.x, v.y, v.width, v.height]) || !(v.width! > 0) || !(v.height! > 0)) return { problem: 'a rectangle needs x, y and a positive width and height' };
  const [x, y, w, h] = [v.x! * sx, v.y! * sy, v.width! * sx, v.height! * sy];
  const rotation = normalizeDegrees(typeof v.rotation === 'number' && Number.isFinite(v.rotation) ? v.rotation : 0);
  if (rotation === 0) return { geometry: { x, y, width: w, height: h } };
  // Label Studio turns the rectangle about its top-left corner (x, y); Versa about its centre.
  const rad = (rotation * Math.PI) / 180;
  const cx = x + (w / 2) * Math.cos(rad) - (h / 2) * Math.sin(rad);
  const cy = y + (w / 2) * Math.sin(rad) + (h / 2) * Math.cos(rad);
  return { geometry: { x: cx - w / 2, y: cy - h / 2, width: w, height: h, rotation } };
}

/** A brush result (Label Studio's rle of RGBA pixels) as a mask of the image's size. */
function brushGeometry(r: LsResult, size: { width: number; height: number }): Converted {
  const v = r.value ?? {};
  const width = r.original_width ?? size.width;
  const height = r.original_height ?? size.height;
  if (v.format !== undefined && v.format !== 'rle') return { problem: `brush format "${v.format}" is not Label Studio's rle` };
  if (!Array.isArray(v.rle)) return { problem: 'a brush result needs its rle' };
  if (width !== size.width || height !== size.height) return { problem: `the brush mask is ${width}×${height} but the image is ${size.width}×${size.height}` };
  let rgba: ArrayLike<number>;
  try {
    rgba = decodeRlePack(Uint8Array.from(v.rle));
  } catch (error) {
    return { problem: `the brush rle does not decode: ${(error as Error).message}` };
  }
  if (rgba.length < width * height * 4) return { problem: `the brush rle is shorter than ${width}×${height} pixels` };
  const data = new Uint8Array(width * height);
  for (let i = 0; i < data.length; i++) data[i] = rgba[i * 4 + 3] > 0 ? 1 : 0;
  return { geometry: { rle: encodeRle({ width, height, data }) } };
}

/** An ellipse in percent of the image, scaled. */
function ellipseGeometry(v: NonNullable<LsResult['value']>, sx: number, sy: number): Converted {
  if (!finite([v.x, v.y, v.radiusX, v.radiusY]) || !(v.radiusX! > 0) || !(v.radiusY! > 0)) return { problem: 'an ellipse needs x, y and positive radiusX, radiusY' };
  const rotation = normalizeDegrees(typeof v.rotation === 'number' && Number.isFinite(v.rotation) ? v.rotation : 0);
  return { geometry: { cx: v.x! * sx, cy: v.y! * sy, rx: v.radiusX! * sx, ry: v.radiusY! * sy, rotation } };
}

/** A region's geometry in the image's pixels (Label Studio gives percent of the image as it saw it). */
function regionGeometry(type: string, r: LsResult, size: { width: number; height: number }): Converted {
  const v = r.value ?? {};
  const [sx, sy] = [size.width / 100, size.height / 100];
  if (type === 'rectanglelabels') return rectangleGeometry(v, sx, sy);
  if (type === 'ellipselabels') return ellipseGeometry(v, sx, sy);
  if (type === 'brushlabels') return brushGeometry(r, size);
  const points = (v.points ?? []).map((p) => [Number(p?.[0]) * sx, Number(p?.[1]) * sy] as Point);
  if (points.length < 3 || points.some((p) => !p.every(Number.isFinite))) return { problem: 'a polygon needs at least 3 points' };
  return { geometry: { points: openRing(points) } };
}

/** The annotations of one task's results (regions, their per-region controls, image-level choices). */
function convertTask(results: LsResult[], size: { width: number; height: number }, file: string, task: string, skip: Skip, skeletons: ReadonlyMap<string, string[]>, keep: ImportLedger['keep']): Annotation[] {
  const regionIds = new Set(results.filter((r) => r.type && r.type in REGION_TYPES && r.id).map((r) => r.id!));
  const pose = poseInstances(results);
  const posePoints = new Set([...pose.values()].flat());
  const posePointIds = new Set([...posePoints].map((r) => r.id).filter(Boolean));
  const occluded = new Set<string>();
  const attributes = regionAttributes(results, regionIds, posePointIds, occluded, (item, reason) => skip('attributes', '', { file, item: `${task} ${item}`, reason }));
  const groups = regionGroups(results, regionIds, posePoints, skip, keep, file, task);

  const out: Annotation[] = [];
  const pointSets = new Map<string, Annotation & { type: 'points' }>();
  results.forEach((r, index) => {
    const type = r.type ?? '(no type)';
    const item = `${task} result ${r.id ?? index + 1} (${type})`;
    const extras = (className: string) => {
      const attrs = r.id ? attributes.get(r.id) : undefined;
      const groupId = r.id ? groups.get(r.id) : undefined;
      return { className, ...(attrs ? { attributes: attrs } : {}), ...(groupId ? { groupId } : {}) };
    };
    if (PER_REGION_TYPES.has(type) && r.id && regionIds.has(r.id)) return; // an attribute of its region (above)
    if (posePoints.has(r)) return; // a point of its instance (below)
    const instance = r.id ? pose.get(r.id) : undefined;
    if (instance && labelsOf(r)[0]) {
      const keypoints = poseKeypoints(r, instance, size, skeletons.get(labelsOf(r)[0]) ?? [], occluded, (child, reason) => skip('annotations', 'keypoints', { file, item: `${task} result ${child.id ?? '?'} (keypointlabels "${labelsOf(child)[0]}")`, reason }));
      if (!keypoints) return skip('annotations', 'keypoints', { file, item, reason: 'a rectangle needs x, y and a positive width and height' });
      out.push({ type: 'keypoints', ...extras(labelsOf(r)[0]), geometry: keypoints });
      return;
    }
    if (type === 'choices') {
      for (const className of labelsOf(r)) out.push({ type: 'classification', className, geometry: {} });
      return;
    }
    if (type === 'relation') return; // a link of its group (above)
    if (type === 'videorectangle') {
      const frames = Array.isArray((r.value as { sequence?: unknown[] } | undefined)?.sequence) ? (r.value as { sequence: unknown[] }).sequence.length : 0;
      skip('tracks', '', { file, item: `${item} "${labelsOf(r).join(', ')}"`, reason: `a video track (${frames} keyframes): Versa does not import video tracks yet` });
      return;
    }
    if (!(type in REGION_TYPES)) {
      skip('annotations', type, { file, item, reason: PER_REGION_TYPES.has(type) ? 'an image-level text or number has no counterpart in Versa' : `Versa has no shape for Label Studio's ${type}` });
      return;
    }
    const names = labelsOf(r);
    if (names.length === 0) {
      skip('annotations', REGION_TYPES[type], { file, item, reason: 'the region has no label' });
      return;
    }
    const problem = (reason: string) => skip('annotations', REGION_TYPES[type], { file, item, reason });
    if (type !== 'keypointlabels') {
      const converted = regionGeometry(type, r, size);
      if ('problem' in converted) return problem(converted.problem);
      for (const className of names) out.push({ type: REGION_TYPES[type], ...extras(className), geometry: converted.geometry } as Annotation);
      return;
    }
    const v = r.value ?? {};
    if (!finite([v.x, v.y])) return problem('a keypoint needs x and y');
    const point: Point = [v.x! * (size.width / 100), v.y! * (size.height / 100)];
    const parent = r.parentID && regionIds.has(r.parentID) ? r.parentID : '';
    for (const className of names) {
      const key = `${className}\u0000${parent}`;
      const set = pointSets.get(key);
      if (set) {
        set.geometry.points.push(point);
        continue;
      }
      const attrs = r.id ? attributes.get(r.id) : undefined;
      const created: Annotation & { type: 'points' } = { type: 'points', className, ...(attrs ? { attributes: attrs } : {}), ...(parent && groups.get(parent) ? { groupId: groups.get(parent) } : {}), geometry: { points: [point] } };
      pointSets.set(key, created);
      out.push(created);
    }
  });
  return out;
}

/**
 * Group ids by region id: regions a `relation` links, or one hangs on (`parentID`), directly or through others, are
 * one group, numbered in order of appearance (a pose point is its instance, not a member). Each relation is kept as
 * its group's link (its labels skipped), or skipped when its ends are not two regions of the task.
 */
function regionGroups(
  results: LsResult[], regionIds: ReadonlySet<string>, posePoints: ReadonlySet<LsResult>, skip: Skip, keep: ImportLedger['keep'], file: string, task: string,
): Map<string, number> {
  const link = new Map<string, string>();
  const root = (id: string): string => (link.has(id) ? root(link.get(id)!) : id);
  const join = (a: string, b: string) => {
    const [ra, rb] = [root(a), root(b)];
    if (ra !== rb) link.set(rb, ra);
  };
  const linked = new Set<string>();
  for (const r of results) {
    if (r.type === 'relation') {
      const item = `${task} relation ${r.from_id ?? '?'}→${r.to_id ?? '?'}`;
      if (!r.from_id || !r.to_id || !regionIds.has(r.from_id) || !regionIds.has(r.to_id)) {
        skip('annotations', 'relation', { file, item, reason: 'it does not link two regions of the task' });
        continue;
      }
      join(r.from_id, r.to_id);
      linked.add(r.from_id).add(r.to_id);
      keep('annotations', 'relation');
      const labels = Array.isArray(r.labels) ? r.labels.filter((l) => typeof l === 'string' && l) : [];
      if (labels.length > 0) skip('attributes', '', { file, item: `labels "${labels.join(', ')}" of ${item}`, reason: 'a Versa group has no relation labels' });
    } else if (r.id && r.parentID && regionIds.has(r.id) && regionIds.has(r.parentID) && !posePoints.has(r)) {
      join(r.parentID, r.id);
      linked.add(r.parentID).add(r.id);
    }
  }
  const numbers = new Map<string, number>();
  const groups = new Map<string, number>();
  for (const r of results) {
    if (!r.id || !linked.has(r.id) || groups.has(r.id)) continue;
    const top = root(r.id);
    if (!numbers.has(top)) numbers.set(top, numbers.size + 1);
    groups.set(r.id, numbers.get(top)!);
  }
  return groups;
}

/**
 * Pose instances of one task's results: by rectangle id, the `keypointlabels` hanging on it (`parentID`) whose label
 * is not the rectangle's (a point's name, as in Label Studio's pose templates; a point of the rectangle's own label is
 * a point set in its group).
 */
function poseInstances(results: LsResult[]): Map<string, LsResult[]> {
  const rectangles = new Map(results.filter((r) => r.type === 'rectanglelabels' && r.id).map((r) => [r.id!, r]));
  const out = new Map<string, LsResult[]>();
  for (const r of results) {
    const parent = r.type === 'keypointlabels' && r.parentID ? rectangles.get(r.parentID) : undefined;
    const label = labelsOf(r)[0];
    if (!parent || !label || labelsOf(parent).includes(label)) continue;
    out.set(r.parentID!, [...(out.get(r.parentID!) ?? []), r]);
  }
  return out;
}

/** Adds to a skeleton's point order the names an instance lists that it lacks, each before the next name it knows. */
function mergeNames(order: string[], names: string[]): void {
  names.forEach((name, i) => {
    if (order.includes(name)) return;
    const next = names.slice(i + 1).find((n) => order.includes(n));
    if (next === undefined) order.push(name);
    else order.splice(order.indexOf(next), 0, name);
  });
}

/** A pose instance's keypoints in its class's skeleton order, with the rectangle (upright envelope if turned) as the box. */
function poseKeypoints(
  rect: LsResult, points: LsResult[], size: { width: number; height: number }, names: string[], occluded: ReadonlySet<string>,
  problem: (point: LsResult, reason: string) => void,
): KeypointsGeometry | null {
  const v = rect.value ?? {};
  if (!finite([v.x, v.y, v.width, v.height]) || !(v.width! > 0) || !(v.height! > 0)) return null;
  const sx = size.width / 100;
  const sy = size.height / 100;
  const [x, y, w, h] = [v.x! * sx, v.y! * sy, v.width! * sx, v.height! * sy];
  const rad = ((typeof v.rotation === 'number' && Number.isFinite(v.rotation) ? v.rotation : 0) * Math.PI) / 180;
  // Label Studio turns a rectangle about its top-left corner.
  const corners = [[0, 0], [w, 0], [w, h], [0, h]].map(([dx, dy]) => [x + dx * Math.cos(rad) - dy * Math.sin(rad), y + dx * Math.sin(rad) + dy * Math.cos(rad)]);
  const [x0, y0] = [Math.min(...corners.map((c) => c[0])), Math.min(...corners.map((c) => c[1]))];
  const bbox = { x: x0, y: y0, width: Math.max(...corners.map((c) => c[0])) - x0, height: Math.max(...corners.map((c) => c[1])) - y0 };
  const out: Keypoint[] = names.map(() => [0, 0, 0]);
  for (const point of points) {
    const p = point.value ?? {};
    const i = names.indexOf(labelsOf(point)[0]);
    if (i < 0) problem(point, 'its name is in no skeleton');
    else if (!finite([p.x, p.y])) problem(point, 'a keypoint needs x and y');
    else if (out[i][2] > 0) problem(point, `the instance has point "${names[i]}" already`);
    else out[i] = [p.x! * sx, p.y! * sy, point.id && occluded.has(point.id) ? 1 : 2];
  }
  return { points: out, bbox };
}
