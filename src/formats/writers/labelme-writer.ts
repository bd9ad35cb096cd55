import type { Writable } from 'node:stream';
import { greyPng } from '../../imaging/dataset-pixels.js';
import type { AttributeValue } from '../../imaging/class-specs.js';
import { rotatedCorners, type EllipseGeometry } from '../../imaging/geometry.js';
import { encodeRle, type Rle } from '../../imaging/rle.js';
import type { Annotation, DatasetToWrite, Point, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillPolygon, round2 } from '../geometry.js';
import { maskCrop } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally, WITH_ATTRIBUTES, type Wrote } from './export-tally.js';

/**
 * LabelMe JSON (what the labelme tool opens and labelme2coco reads): `<split>/<stem>.json` beside `<split>/<image>`,
 * one document per image with `shapes`, each as its LabelMe type: `rectangle` (two corners), `polygon` (a polygon in
 * parts: one per part sharing a `group_id`), `circle` (an ellipse with rx = ry: centre and a point on it), `linestrip`
 * (polyline), `point` / `points`, `mask` (labelme ≥ 5.3: a base64 PNG of the mask inside its box, the box's corners
 * as points). What LabelMe cannot draw is converted: a rotated box → its 4-corner polygon, another ellipse → a
 * 64-point polygon, a polygon with holes → a mask, keypoints → one `point` per labelled point (its name as the
 * description, one `group_id` per instance). Boolean attributes are the shape's `flags`, the text attribute
 * `description` its description, the others an `attributes` object (labelme keeps unknown keys); image-level labels
 * are the image's `flags`.
 *
 * Versions: the documents follow labelme 5.5's schema and say so (`version`); labelme 4 and 5 open them (a version
 * warning at most), and the legacy colour keys labelme 3.x reads by name (`lineColor`, `fillColor`, each shape's
 * `line_color`, `fill_color`) are written as null so that it opens them too. The version a dataset was read from is
 * not kept: it says which schema a file follows, not anything about its labels, and the reader reads every version's
 * schema (labelme-reader).
 */
export const LABELME_VERSION = '5.5.0';

export async function writeLabelMe(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classes = new Set(dataset.classes);
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    const used = new Set<string>();
    for await (const item of dataset.items) {
      const folder = item.split ?? 'images';
      const fileName = safeEntryName(item.fileName);
      const { width, height } = await sizeOf(item);
      const shapes: object[] = [];
      const flags: Record<string, boolean> = {};
      let nextGroup = Math.max(0, ...item.annotations.map((a) => a.groupId ?? 0)) + 1;
      for (const a of item.annotations) {
        if (!classes.has(a.className)) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        if (a.type === 'classification') {
          flags[a.className] = true;
          stats.annotationCount++;
          tally.shape(a, 'kept', 'classification');
          continue;
        }
        const shapeFlags: Record<string, boolean> = {};
        const attributes: Record<string, AttributeValue> = {};
        let description = '';
        for (const [name, value] of Object.entries(a.attributes ?? {})) {
          if (typeof value === 'boolean') shapeFlags[name] = value;
          else if (name === 'description' && typeof value === 'string') description = value;
          else attributes[name] = value;
        }
        const base = (groupId: number | null = a.groupId ?? null) => ({
          label: a.className,
          // labelme 3.x reads these by key (a document without them does not open there); null: its default colours.
          line_color: null,
          fill_color: null,
          group_id: groupId,
          description,
          flags: shapeFlags,
          ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
        });
        const xy = (points: readonly (readonly number[])[]) => points.map(([x, y]) => [round2(x), round2(y)]);
        const before = shapes.length;
        const maskShape = async (rle: Rle) => {
          const crop = maskCrop(rle);
          if (!crop) return;
          const png = await greyPng(crop.data.map((v) => (v ? 1 : 0)), crop);
          shapes.push({ ...base(), shape_type: 'mask', points: [[crop.left, crop.top], [crop.left + crop.width - 1, crop.top + crop.height - 1]], mask: png.toString('base64') });
        };
        if (a.type === 'bbox') {
          const g = a.geometry;
          if (g.rotation) shapes.push({ ...base(), shape_type: 'polygon', points: xy(rotatedCorners(g)) });
          else shapes.push({ ...base(), shape_type: 'rectangle', points: [[round2(g.x), round2(g.y)], [round2(g.x + g.width), round2(g.y + g.height)]] });
        } else if (a.type === 'polygon') {
          const parts = a.geometry.parts ?? [a.geometry.points];
          if (a.geometry.holes?.length) {
            const data = new Uint8Array(width * height);
            for (const part of parts) fillPolygon(data, width, height, part as Point[], 1);
            for (const hole of a.geometry.holes) fillPolygon(data, width, height, hole as Point[], 0);
            await maskShape(encodeRle({ width, height, data }));
          } else {
            const group = parts.length > 1 ? (a.groupId ?? nextGroup++) : (a.groupId ?? null);
            for (const part of parts) shapes.push({ ...base(group), shape_type: 'polygon', points: xy(part) });
          }
        } else if (a.type === 'mask') {
          await maskShape(a.geometry.rle);
        } else if (a.type === 'polyline') {
          shapes.push({ ...base(), shape_type: 'linestrip', points: xy(a.geometry.points) });
        } else if (a.type === 'points') {
          shapes.push({ ...base(), shape_type: a.geometry.points.length === 1 ? 'point' : 'points', points: xy(a.geometry.points) });
        } else if (a.type === 'ellipse') {
          const g = a.geometry;
          if (Math.abs(g.rx - g.ry) < 1e-9) shapes.push({ ...base(), shape_type: 'circle', points: xy([[g.cx, g.cy], [g.cx + g.rx, g.cy]]) });
          else shapes.push({ ...base(), shape_type: 'polygon', points: xy(ellipsePolygon(g)) });
        } else if (a.type === 'keypoints') {
          const names = dataset.classSpecs?.get(a.className)?.skeleton?.points ?? [];
          const group = a.groupId ?? nextGroup++;
          a.geometry.points.forEach(([x, y, v], i) => {
            if (v === 0) return;
            shapes.push({ ...base(group), description: names[i] ?? String(i + 1), shape_type: 'point', points: xy([[x, y]]) });
          });
        }
        if (shapes.length > before) stats.annotationCount++;
        const conversion = labelMeConversion(a);
        if (shapes.length === before) tally.shape(a, 'skipped', `${a.type} (${a.type === 'keypoints' ? 'no labelled point' : 'no pixels'})`);
        else tally.shape(a, conversion ? 'converted' : 'kept', conversion ?? a.type, a.type === 'keypoints' ? keypointsWrote(a) : WITH_ATTRIBUTES);
      }
      const key = `${folder}/${stemOf(fileName)}`;
      if (used.has(key)) throw new FormatError(`two images named ${stemOf(fileName)} in ${folder}: LabelMe keeps one JSON per image name`);
      used.add(key);
      const doc = { version: LABELME_VERSION, flags, shapes, lineColor: null, fillColor: null, imagePath: fileName, imageData: null, imageHeight: height, imageWidth: width };
      await zip.addImage(`${folder}/${fileName}`, item.source);
      await zip.addBuffer(`${key}.json`, JSON.stringify(doc, null, 2));
      stats.imageCount++;
    }
    return stats;
  });
}

/** A keypoint's `description` is its point's name: the instance's own `description` value has no place. */
function keypointsWrote(a: Annotation): Wrote {
  return { ...WITH_ATTRIBUTES, attributes: Object.keys(a.attributes ?? {}).filter((name) => name !== 'description'), why: "each point's description is its name" };
}

/** What LabelMe cannot draw as it is (see writeLabelMe), or null when the shape is written as itself. */
function labelMeConversion(a: Annotation): string | null {
  if (a.type === 'bbox' && a.geometry.rotation) return 'bbox (rotated)→polygon';
  if (a.type === 'polygon' && a.geometry.holes?.length) return 'polygon with holes→mask';
  if (a.type === 'polygon' && (a.geometry.parts?.length ?? 1) > 1) return 'polygon parts→polygons sharing group_id';
  if (a.type === 'ellipse' && Math.abs(a.geometry.rx - a.geometry.ry) >= 1e-9) return 'ellipse→polygon';
  if (a.type === 'keypoints') return 'keypoints→points';
  return null;
}

/** An ellipse as a 64-point polygon (LabelMe draws only circles). */
function ellipsePolygon(e: EllipseGeometry): Point[] {
  const rad = (e.rotation * Math.PI) / 180;
  return Array.from({ length: 64 }, (_, i) => {
    const t = (2 * Math.PI * i) / 64;
    const x = e.rx * Math.cos(t);
    const y = e.ry * Math.sin(t);
    return [e.cx + x * Math.cos(rad) - y * Math.sin(rad), e.cy + x * Math.sin(rad) + y * Math.cos(rad)] as Point;
  });
}
