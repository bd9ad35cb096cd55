import type { Writable } from 'node:stream';
import { encode as encodeRlePack } from '@thi.ng/rle-pack';
import type { AttributeSpec, AttributeValue } from '../../imaging/class-specs.js';
import { decodeRle } from '../../imaging/rle.js';
import type { KeypointsGeometry } from '../../imaging/geometry.js';
import type { Annotation, DatasetToWrite, WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillPolygon } from '../geometry.js';
import { subsetOf } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally, type Wrote } from './export-tally.js';

/**
 * Label Studio JSON (what Label Studio's "Import" takes and its converter reads): `export.json`, a list of tasks
 * `{id, data: {image}, annotations: [{result}]}`, beside `images/<split>/<file>`. Every value is in percent of the
 * image (`original_width` × `original_height` on each result) and every result has an id.
 * - bbox → `rectanglelabels`; a rotated box is turned about its top-left corner as Label Studio does (the corner is
 *   the centre − R·(w/2, h/2)), the same angle.
 * - polygon → `polygonlabels`; an object in several parts or with holes → `brushlabels` (its filled parts less its
 *   holes), as Label Studio's polygons have neither.
 * - mask → `brushlabels`, Label Studio's RLE (@thi.ng/rle-pack over the RGBA layer, 255 inside).
 * - ellipse → `ellipselabels` (centre, radii, rotation); points → one `keypointlabels` per point (the class its label).
 * - keypoints → a `rectanglelabels` of the class (the instance's box, or the envelope of its labelled points when it
 *   has none) and one `keypointlabels` per labelled point hanging on it (`parentID`), labelled with the point's name
 *   in the class's skeleton, as Label Studio's pose templates label points; an occluded point (visibility 1) has an
 *   `occluded` choice "true". Label Studio keeps no skeleton edges: the reader rebuilds the points' order from
 *   their names (labelstudio-reader).
 * - classification → one image-level `choices` result listing the classes.
 * - attributes → per-region controls sharing the region's id, named by the attribute: text → `textarea`, number →
 *   `number`, select → `choices`, checkbox → `choices` of "true"/"false" (read back as a checkbox).
 * Groups: a group of one box and point sets of its class is written as the points hanging on the box (`parentID`);
 * any other group of two or more regions as `relation` results from its first region to each other one. The reader
 * reads both back as the group.
 */
/** A region's attribute values are controls sharing its id; a frame shape's `track_id` is one of them. */
const WROTE: Wrote = { attributes: 'all', track: "track_id attribute on each frame's shape" };
const HUNG: Wrote = { ...WROTE, group: 'points hanging on their box (parentID)' };
const RELATED: Wrote = { ...WROTE, group: 'relations between its regions' };

export async function writeLabelStudio(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classes = new Set(dataset.classes);
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    const tasks: object[] = [];
    for await (const item of dataset.items) {
      const folder = `images/${safeEntryName(subsetOf(item.split))}`;
      const fileName = safeEntryName(item.fileName);
      const { width, height } = await sizeOf(item);
      const result: object[] = [];
      const choices: string[] = [];
      let next = 0;
      const regionIds = new Map<Annotation, string[]>();
      const hung = new Set(groupsOf(item.annotations).flatMap((members) => (boxWithItsPoints(members) ? members : [])));
      const related = new Set(groupsOf(item.annotations).flatMap((members) => (boxWithItsPoints(members) ? [] : drawnRegions(members))));
      const newId = () => `r${++next}`;
      const base = { to_name: 'image', original_width: width, original_height: height, image_rotation: 0, origin: 'manual' };
      const px = (x: number) => (x / width) * 100;
      const py = (y: number) => (y / height) * 100;
      for (const a of item.annotations) {
        if (!classes.has(a.className)) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        if (a.type === 'classification') {
          if (!choices.includes(a.className)) choices.push(a.className);
          stats.annotationCount++;
          tally.shape(a, 'kept', 'classification');
          continue;
        }
        const names = dataset.classSpecs?.get(a.className)?.skeleton?.points ?? [];
        const ids = regionsOf(a, { width, height, names }, newId, px, py, base, result);
        regionIds.set(a, ids);
        const conversion = labelStudioConversion(a);
        if (ids.length === 0) {
          tally.shape(a, 'skipped', `${a.type} (no labelled point)`);
          continue;
        }
        tally.shape(a, conversion ? 'converted' : 'kept', conversion ?? a.type, hung.has(a) ? HUNG : related.has(a) ? RELATED : WROTE);
        const specs = dataset.classSpecs?.get(a.className)?.attributes ?? [];
        for (const [name, value] of Object.entries(a.attributes ?? {})) result.push(attributeResult(ids[0], name, value, specs, base));
        stats.annotationCount++;
      }
      hangPointsOnTheirBox(item.annotations, regionIds, result);
      relateGroups(item.annotations, regionIds, result);
      if (choices.length > 0) result.push({ id: newId(), type: 'choices', from_name: 'class', ...base, value: { choices } });
      const image = `${folder}/${fileName}`;
      await zip.addImage(image, item.source);
      tasks.push({ id: tasks.length + 1, data: { image }, annotations: [{ id: tasks.length + 1, result, was_cancelled: false, ground_truth: false }], predictions: [] });
      stats.imageCount++;
    }
    await zip.addBuffer('export.json', JSON.stringify(tasks, null, 1));
    return stats;
  });
}

/**
 * A group of one box and point sets of its class (what the reader makes of points hanging on a rectangle): the
 * points hang on the box (`parentID`), as Label Studio's own keypoints on a region, so the group comes back. Other
 * groups are written as relations (relateGroups).
 */
export function boxWithItsPoints(members: readonly Annotation[]): { box: Annotation; points: Annotation[] } | null {
  const boxes = members.filter((m) => m.type === 'bbox');
  const points = members.filter((m) => m.type === 'points');
  if (boxes.length !== 1 || points.length === 0 || boxes.length + points.length !== members.length) return null;
  return points.every((p) => p.className === boxes[0].className) ? { box: boxes[0], points } : null;
}

/** The members of a group drawn as regions (a relation links regions), when there are two or more of them. */
function drawnRegions(members: readonly Annotation[]): Annotation[] {
  const drawn = members.filter((m) => m.type !== 'classification' && !(m.type === 'keypoints' && m.geometry.points.every((p) => p[2] === 0)));
  return drawn.length > 1 ? drawn : [];
}

/** Other groups as Label Studio's `relation` results, from the group's first region to each other one (read back as the group). */
function relateGroups(annotations: readonly Annotation[], regionIds: ReadonlyMap<Annotation, string[]>, result: object[]): void {
  for (const members of groupsOf(annotations)) {
    if (boxWithItsPoints(members)) continue;
    const [first, ...others] = drawnRegions(members).map((m) => regionIds.get(m)?.[0]).filter((id): id is string => id !== undefined);
    for (const to of others) result.push({ from_id: first, to_id: to, type: 'relation', direction: 'right', labels: [] });
  }
}

/** The groups of an image's annotations: the members of each group id. */
function groupsOf(annotations: readonly Annotation[]): Annotation[][] {
  const groups = new Map<number, Annotation[]>();
  for (const a of annotations) if (a.groupId) groups.set(a.groupId, [...(groups.get(a.groupId) ?? []), a]);
  return [...groups.values()];
}

function hangPointsOnTheirBox(annotations: readonly Annotation[], regionIds: ReadonlyMap<Annotation, string[]>, result: object[]): void {
  for (const members of groupsOf(annotations)) {
    const group = boxWithItsPoints(members);
    const parentID = group && regionIds.get(group.box)?.[0];
    if (!group || !parentID) continue;
    const pointIds = new Set(group.points.flatMap((p) => regionIds.get(p) ?? []));
    for (const r of result as { id?: string; parentID?: string }[]) if (r.id && pointIds.has(r.id)) r.parentID = parentID;
  }
}

/** What Label Studio cannot draw as it is (see writeLabelStudio), or null when the shape is written as itself. */
function labelStudioConversion(a: Annotation): string | null {
  if (a.type === 'polygon' && (a.geometry.parts || a.geometry.holes)) return 'polygon in parts or with holes→brush';
  if (a.type === 'polyline') return 'polyline→keypoints';
  if (a.type === 'keypoints') return a.geometry.bbox ? 'keypoints→keypointlabels on their box (no skeleton edges)' : 'keypoints→keypointlabels on their points\' envelope box (no skeleton edges)';
  return null;
}

type Base = { to_name: string; original_width: number; original_height: number };

/** Pushes the results that draw `a` and answers their ids (the first carries the attributes). */
function regionsOf(a: Annotation, image: { width: number; height: number; names: readonly string[] }, newId: () => string, px: (x: number) => number, py: (y: number) => number, base: Base, out: object[]): string[] {
  const { width, height } = image;
  const region = (type: string, value: object, extra: object = {}, label = a.className) => {
    const id = newId();
    out.push({ id, type, from_name: type, ...base, ...extra, value: { ...value, [type]: [label] } });
    return id;
  };
  switch (a.type) {
    case 'bbox': {
      const g = a.geometry;
      const rotation = g.rotation ?? 0;
      const rad = (rotation * Math.PI) / 180;
      // The top-left corner Label Studio turns the rectangle about: centre − R·(w/2, h/2).
      const cx = g.x + g.width / 2;
      const cy = g.y + g.height / 2;
      const x = cx - (g.width / 2) * Math.cos(rad) + (g.height / 2) * Math.sin(rad);
      const y = cy - (g.width / 2) * Math.sin(rad) - (g.height / 2) * Math.cos(rad);
      return [region('rectanglelabels', { x: px(x), y: py(y), width: px(g.width), height: py(g.height), rotation })];
    }
    case 'polygon': {
      const g = a.geometry;
      if (!g.parts && !g.holes) return [region('polygonlabels', { points: g.points.map(([x, y]) => [px(x), py(y)]) })];
      const data = new Uint8Array(width * height);
      for (const part of g.parts ?? [g.points]) fillPolygon(data, width, height, part, 1);
      for (const hole of g.holes ?? []) fillPolygon(data, width, height, hole, 0);
      return [region('brushlabels', brush(data))];
    }
    case 'mask':
      return [region('brushlabels', brush(decodeRle(a.geometry.rle).data))];
    case 'ellipse': {
      const g = a.geometry;
      return [region('ellipselabels', { x: px(g.cx), y: py(g.cy), radiusX: px(g.rx), radiusY: py(g.ry), rotation: g.rotation })];
    }
    case 'points':
      return a.geometry.points.map(([x, y]) => region('keypointlabels', { x: px(x), y: py(y), width: 0.5 }));
    case 'polyline': {
      // Label Studio has no open paths in image results: the points of the path, in order, as a point set.
      return a.geometry.points.map(([x, y]) => region('keypointlabels', { x: px(x), y: py(y), width: 0.5 }));
    }
    case 'keypoints':
      return keypointRegions(a.geometry, image.names, region, px, py, out, base);
    default:
      return [];
  }
}

type Region = (type: string, value: object, extra?: object, label?: string) => string;

/** A keypoints instance: its box (or its labelled points' envelope) and a point per labelled point named by the skeleton. */
function keypointRegions(g: KeypointsGeometry, names: readonly string[], region: Region, px: (x: number) => number, py: (y: number) => number, out: object[], base: Base): string[] {
  const labelled = g.points.map((p, i) => [p, i] as const).filter(([p]) => p[2] > 0);
  if (labelled.length === 0) return [];
  const box = g.bbox ?? envelope(labelled.map(([p]) => p));
  const parent = region('rectanglelabels', { x: px(box.x), y: py(box.y), width: px(box.width), height: py(box.height), rotation: 0 });
  const points = labelled.map(([[x, y, v], i]) => {
    const id = region('keypointlabels', { x: px(x), y: py(y), width: 0.5 }, { parentID: parent }, names[i] ?? String(i + 1));
    if (v === 1) out.push({ id, type: 'choices', from_name: 'occluded', ...base, value: { choices: ['true'] } });
    return id;
  });
  return [parent, ...points];
}

/** The box around points, at least 1 px each way (Label Studio refuses a rectangle without area). */
function envelope(points: readonly (readonly number[])[]): { x: number; y: number; width: number; height: number } {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const [x, y] = [Math.min(...xs), Math.min(...ys)];
  return { x, y, width: Math.max(1, Math.max(...xs) - x), height: Math.max(1, Math.max(...ys) - y) };
}

/** Label Studio's brush RLE of a row-major mask: rle-pack over RGBA bytes, 255 inside. */
function brush(data: Uint8Array): { format: 'rle'; rle: number[] } {
  const rgba = new Uint8Array(data.length * 4);
  for (let i = 0; i < data.length; i++) if (data[i]) rgba.fill(255, i * 4, i * 4 + 4);
  return { format: 'rle', rle: Array.from(encodeRlePack(rgba, rgba.length, 8)) };
}

function attributeResult(id: string, name: string, value: AttributeValue, specs: readonly AttributeSpec[], base: Base): object {
  const spec = specs.find((s) => s.name === name);
  const common = { id, from_name: name, ...base };
  if (typeof value === 'number') return { ...common, type: 'number', value: { number: value } };
  if (typeof value === 'boolean') return { ...common, type: 'choices', value: { choices: [String(value)] } };
  if (spec?.type === 'text') return { ...common, type: 'textarea', value: { text: [value] } };
  return { ...common, type: 'choices', value: { choices: [value] } };
}
