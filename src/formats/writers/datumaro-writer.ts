import type { Writable } from 'node:stream';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, DatasetToWrite, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillPolygon, round2 } from '../geometry.js';
import { encodeCompressedCounts, subsetOf } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally, WITH_ATTRIBUTES } from './export-tally.js';

/**
 * Datumaro JSON (CVAT's "Datumaro 1.0", `datum convert` input): `annotations/<subset>.json` with the label
 * categories and one item per image, images under `images/<subset>/`.
 * - bbox → `bbox` [x, y, w, h], a rotated one with the `rotation` attribute (as CVAT writes it);
 * - polygon → `polygon` (flat points); an object in parts → one polygon per part in one `group`; an object with
 *   holes → `mask` (its parts filled less its holes: Datumaro polygons have no holes);
 * - polyline → `polyline`; points → `points` (all visible); ellipse → `ellipse` (the corners of its box before
 *   rotation, and the `rotation` attribute); mask → `mask` (COCO RLE, compressed counts); classification → `label`;
 * - keypoints → `skeleton` as CVAT's Datumaro (cvat-ai/datumaro, since 2024) writes it: `points` as x, y,
 *   visibility triples (0 absent, 1 hidden, 2 visible) in the skeleton's order and an empty `points_attributes` per
 *   point; each skeleton point is a label whose `parent` is the class (listed after the classes), the class's
 *   skeleton is in the `points` category (point names, `joints` 1-based as COCO); the instance's box is a `bbox`
 *   in the same group;
 * - attributes → `attributes`, declared by name on their label; group ids → `group`.
 */
export async function writeDatumaro(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const labelId = new Map(dataset.classes.map((name, index) => [name, index]));
    // Skeleton points as sublabels after the classes (class indices stay as they are).
    const sublabels = dataset.classes.flatMap((parent) => (dataset.classSpecs?.get(parent)?.skeleton?.points ?? []).map((name) => ({ name, parent, attributes: [] })));
    const subsets = new Map<string, object[]>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const subset = safeEntryName(subsetOf(item.split));
      const fileName = safeEntryName(item.fileName);
      const { width, height } = await sizeOf(item);
      // New groups for objects in parts and keypoint boxes start after the groups the image already uses.
      let nextGroup = Math.max(0, ...item.annotations.map((a) => a.groupId ?? 0));
      const annotations: object[] = [];
      for (const a of item.annotations) {
        const label_id = labelId.get(a.className);
        if (label_id === undefined) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        const push = (extra: object, attributes: object = {}, group = a.groupId ?? 0) =>
          annotations.push({ id: annotations.length, attributes: { ...a.attributes, ...attributes }, group, label_id, ...extra });
        shapeOf(a, width, height, push, () => ++nextGroup);
        stats.annotationCount++;
        if (a.type === 'polygon' && a.geometry.holes?.length) tally.shape(a, 'converted', 'polygon with holes→mask', WITH_ATTRIBUTES);
        else if (a.type === 'polygon' && (a.geometry.parts?.length ?? 1) > 1) tally.shape(a, 'converted', 'polygon parts→polygons in one group', WITH_ATTRIBUTES);
        else tally.shape(a, 'kept', a.type, WITH_ATTRIBUTES);
      }
      if (!subsets.has(subset)) subsets.set(subset, []);
      // A video's frame says its number as CVAT's Datumaro export does (`attr.frame`); its track shapes carry `track_id`.
      const attr = item.video ? { frame: item.video.frame } : {};
      subsets.get(subset)!.push({ id: stemOf(fileName), annotations, attr, image: { path: fileName, size: [height, width] } });
      await zip.addImage(`images/${subset}/${fileName}`, item.source);
      stats.imageCount++;
    }
    const labels = [...dataset.classes.map((name) => ({ name, parent: '', attributes: (dataset.classSpecs?.get(name)?.attributes ?? []).map((s) => s.name) })), ...sublabels];
    const points = dataset.classes.flatMap((name, label_id) => {
      const skeleton = dataset.classSpecs?.get(name)?.skeleton;
      return skeleton ? [{ label_id, labels: skeleton.points, joints: skeleton.edges.map(([i, j]) => [i + 1, j + 1]) }] : [];
    });
    const categories = { label: { labels, attributes: [] }, ...(points.length > 0 ? { points: { items: points } } : {}) };
    for (const [subset, items] of subsets) {
      await zip.addBuffer(`annotations/${subset}.json`, JSON.stringify({ info: {}, categories, items }));
    }
    return stats;
  });
}

type Push = (extra: object, attributes?: object, group?: number) => void;

function shapeOf(a: Annotation, width: number, height: number, push: Push, newGroup: () => number): void {
  const flat = (points: number[][]) => points.flatMap(([x, y]) => [x, y]).map(round2);
  switch (a.type) {
    case 'bbox': {
      const g = a.geometry;
      push({ type: 'bbox', bbox: [g.x, g.y, g.width, g.height].map(round2), z_order: 0 }, g.rotation ? { rotation: g.rotation } : {});
      return;
    }
    case 'polygon': {
      const g = a.geometry;
      if (g.holes && g.holes.length > 0) {
        const data = new Uint8Array(width * height);
        for (const part of g.parts ?? [g.points]) fillPolygon(data, width, height, part, 1);
        for (const hole of g.holes) fillPolygon(data, width, height, hole, 0);
        const rle = encodeRle({ width, height, data });
        push({ type: 'mask', rle: { counts: encodeCompressedCounts(rle.counts), size: rle.size }, z_order: 0 });
        return;
      }
      const parts = g.parts ?? [g.points];
      const group = parts.length > 1 ? (a.groupId ?? newGroup()) : (a.groupId ?? 0);
      for (const part of parts) push({ type: 'polygon', points: flat(part), z_order: 0 }, {}, group);
      return;
    }
    case 'polyline':
      push({ type: 'polyline', points: flat(a.geometry.points), z_order: 0 });
      return;
    case 'points':
      push({ type: 'points', points: flat(a.geometry.points), visibility: a.geometry.points.map(() => 2), z_order: 0 });
      return;
    case 'ellipse': {
      const g = a.geometry;
      push({ type: 'ellipse', points: [g.cx - g.rx, g.cy - g.ry, g.cx + g.rx, g.cy + g.ry].map(round2), z_order: 0 }, g.rotation ? { rotation: g.rotation } : {});
      return;
    }
    case 'mask':
      push({ type: 'mask', rle: { counts: encodeCompressedCounts(a.geometry.rle.counts), size: a.geometry.rle.size }, z_order: 0 });
      return;
    case 'keypoints': {
      const g = a.geometry;
      const group = g.bbox ? (a.groupId ?? newGroup()) : (a.groupId ?? 0);
      push({ type: 'skeleton', points: g.points.flatMap(([x, y, v]) => [round2(x), round2(y), v]), points_attributes: g.points.map(() => ({})), z_order: 0 }, {}, group);
      if (g.bbox) push({ type: 'bbox', bbox: [g.bbox.x, g.bbox.y, g.bbox.width, g.bbox.height].map(round2), z_order: 0 }, {}, group);
      return;
    }
    default:
      push({ type: 'label' });
  }
}
