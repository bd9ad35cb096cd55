import type { Writable } from 'node:stream';
import { greyPng } from '../../imaging/dataset-pixels.js';
import { decodeRle } from '../../imaging/rle.js';
import { rotatedCorners } from '../../imaging/geometry.js';
import type { Annotation, DatasetToWrite, Split, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillPolygon } from '../geometry.js';
import { ellipsePolygon } from './coco-writer.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally } from './export-tally.js';

/**
 * Semantic segmentation zip in Roboflow's "PNG masks" layout: `{split}/<image>`, `{split}/<stem>_mask.png` (8-bit
 * grayscale, pixel value = class index, 0 = background) and `{split}/_classes.csv`. Masks, polygons (every part,
 * less the holes), boxes (rotated ones rotated) and ellipses are painted in annotation order, later ones over
 * earlier ones; keypoints, polylines, point sets and classifications have no area and are left out (tallied).
 * Items without a split go to `train`.
 */
export async function writeMasks(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  if (dataset.classes.length > 255) throw new FormatError('PNG class-index masks hold at most 255 classes');
  return writeZip(output, async (zip) => {
    const value = new Map(dataset.classes.map((name, index) => [name, index + 1]));
    const splits = new Set<Split>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const split = item.split ?? 'train';
      splits.add(split);
      const { width, height } = await sizeOf(item);
      const pixels = new Uint8Array(width * height);
      for (const annotation of item.annotations) {
        const v = value.get(annotation.className);
        if (v === undefined) throw new FormatError(`annotation class "${annotation.className}" is not in the class list`);
        if (!paint(annotation, pixels, width, height, v, item.fileName)) {
          tally.shape(annotation, 'skipped', annotation.type);
          continue;
        }
        tally.shape(annotation, 'kept', annotation.type);
        stats.annotationCount++;
      }
      const png = await greyPng(pixels, { width, height }, 6);
      const fileName = safeEntryName(item.fileName);
      await zip.addImage(`${split}/${fileName}`, item.source);
      await zip.addBuffer(`${split}/${stemOf(fileName)}_mask.png`, png);
      stats.imageCount++;
    }
    const csv = ['Pixel Value, Class', '0, background', ...dataset.classes.map((name, i) => `${i + 1}, ${csvCell(name)}`)].join('\n');
    for (const split of splits) await zip.addBuffer(`${split}/_classes.csv`, `${csv}\n`);
    return stats;
  });
}

/**
 * Paints one annotation's pixels with `v` (a pixel is inside when its centre is): a box, rotated or not; every part
 * of a polygon, less its holes; an ellipse; a mask. Answers false for what has no area to paint (keypoints,
 * polylines, point sets, classifications).
 */
function paint(annotation: Annotation, pixels: Uint8Array, width: number, height: number, v: number, fileName: string): boolean {
  switch (annotation.type) {
    case 'bbox':
      fillPolygon(pixels, width, height, rotatedCorners(annotation.geometry), v);
      return true;
    case 'ellipse':
      fillPolygon(pixels, width, height, ellipsePolygon(annotation.geometry, 64), v);
      return true;
    case 'polygon': {
      const { points, parts = [points], holes } = annotation.geometry;
      if (!holes?.length) {
        for (const part of parts) fillPolygon(pixels, width, height, part, v);
        return true;
      }
      // Holes are cut from this object only: what earlier annotations painted there stays.
      const own = new Uint8Array(width * height);
      for (const part of parts) fillPolygon(own, width, height, part, 1);
      for (const hole of holes) fillPolygon(own, width, height, hole, 0);
      for (let i = 0; i < own.length; i++) if (own[i]) pixels[i] = v;
      return true;
    }
    case 'mask': {
      const { rle } = annotation.geometry;
      if (rle.size[0] !== height || rle.size[1] !== width) {
        throw new FormatError(`mask of ${fileName} is ${rle.size[1]}×${rle.size[0]}, its image ${width}×${height}`);
      }
      const bitmap = decodeRle(rle).data;
      for (let i = 0; i < bitmap.length; i++) if (bitmap[i]) pixels[i] = v;
      return true;
    }
    default:
      return false;
  }
}

function csvCell(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

