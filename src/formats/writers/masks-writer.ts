import type { Writable } from 'node:stream';
import { greyPng } from '../../imaging/dataset-pixels.js';
import { decodeRle } from '../../imaging/rle.js';
import type { DatasetToWrite, Split, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillBox, fillPolygon } from '../geometry.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';

/**
 * Semantic segmentation zip in Roboflow's "PNG masks" layout: `{split}/<image>`, `{split}/<stem>_mask.png` (8-bit
 * grayscale, pixel value = class index, 0 = background) and `{split}/_classes.csv`. Masks, polygons and boxes are
 * painted in annotation order, later ones over earlier ones. Items without a split go to `train`.
 */
export async function writeMasks(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
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
        if (annotation.type === 'bbox') fillBox(pixels, width, height, annotation.geometry, v);
        else if (annotation.type === 'polygon') fillPolygon(pixels, width, height, annotation.geometry.points, v);
        else if (annotation.type === 'mask') {
          const { rle } = annotation.geometry;
          if (rle.size[0] !== height || rle.size[1] !== width) {
            throw new FormatError(`mask of ${item.fileName} is ${rle.size[1]}×${rle.size[0]}, its image ${width}×${height}`);
          }
          const bitmap = decodeRle(rle).data;
          for (let i = 0; i < bitmap.length; i++) if (bitmap[i]) pixels[i] = v;
        } else continue;
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

function csvCell(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

