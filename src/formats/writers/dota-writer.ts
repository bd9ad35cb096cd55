import type { Writable } from 'node:stream';
import { geometryBox, rotatedCorners } from '../../imaging/geometry.js';
import type { Annotation, DatasetToWrite, Point, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { safeEntryName } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally, type Wrote } from './export-tally.js';

/**
 * DOTA (v1.0 layout, as DOTA_devkit reads it): `{split}/images/<file>` and `{split}/labelTxt/<stem>.txt`, one object
 * per line `x1 y1 x2 y2 x3 y3 x4 y4 class difficult`, corners clockwise from the box's top left (its top edge first),
 * in pixels. No `imagesource`/`gsd` header (DOTA's tools read files without one). `difficult` is the annotation's
 * `difficult` attribute (true → 1). A class name with white space has it replaced by `-` (DOTA's own names use
 * hyphens: `large-vehicle`). Conversions, counted in the WriteStats: a 4-point polygon is its own quad; an ellipse its
 * rotated bounding rectangle; any other polygon, a mask or keypoints their envelope box. Polylines, point sets and
 * classifications have no DOTA form and are left out.
 */
export async function writeDota(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classes = new Set(dataset.classes);
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const split = item.split ?? 'train';
      const lines: string[] = [];
      for (const annotation of item.annotations) {
        if (!classes.has(annotation.className)) throw new FormatError(`annotation class "${annotation.className}" is not in the class list`);
        const quad = dotaQuad(annotation, tally);
        if (!quad) continue;
        const difficult = annotation.attributes?.difficult === true || annotation.attributes?.difficult === 1 ? 1 : 0;
        lines.push(`${quad.map(([x, y]) => `${r(x)} ${r(y)}`).join(' ')} ${annotation.className.trim().replace(/\s+/g, '-')} ${difficult}`);
      }
      const fileName = safeEntryName(item.fileName);
      await zip.addImage(`${split}/images/${fileName}`, item.source);
      await zip.addBuffer(`${split}/labelTxt/${stemOf(fileName)}.txt`, lines.length ? `${lines.join('\n')}\n` : '');
      stats.imageCount++;
      stats.annotationCount += lines.length;
    }
    return stats;
  });
}

/** What a DOTA line holds besides its corners and class: the `difficult` flag. */
const WROTE: Wrote = { attributes: ['difficult'] };

/** The four corners DOTA writes for an annotation, or null (counted as skipped) when it has none. */
function dotaQuad(annotation: Annotation, tally: ExportTally): Point[] | null {
  switch (annotation.type) {
    case 'bbox':
      tally.shape(annotation, 'kept', 'bbox', WROTE);
      return rotatedCorners(annotation.geometry);
    case 'ellipse': {
      const e = annotation.geometry;
      tally.shape(annotation, 'converted', 'ellipse→rotated bbox', WROTE);
      return rotatedCorners({ x: e.cx - e.rx, y: e.cy - e.ry, width: 2 * e.rx, height: 2 * e.ry, rotation: e.rotation });
    }
    case 'classification':
    case 'polyline':
    case 'points':
      tally.shape(annotation, 'skipped', annotation.type, WROTE);
      return null;
    default: {
      if (annotation.type === 'polygon' && !annotation.geometry.parts && !annotation.geometry.holes && annotation.geometry.points.length === 4) {
        tally.shape(annotation, 'kept', 'polygon', WROTE);
        return annotation.geometry.points;
      }
      const box = geometryBox(annotation.type, annotation.geometry);
      if (!box) {
        tally.shape(annotation, 'skipped', `${annotation.type} (no area in the image)`, WROTE);
        return null;
      }
      tally.shape(annotation, 'converted', `${annotation.type}→bbox`, WROTE);
      return rotatedCorners(box);
    }
  }
}

function r(value: number): number {
  return Math.round(value * 100) / 100;
}
