import type { Writable } from 'node:stream';
import { greyPng } from '../../imaging/dataset-pixels.js';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { round2 } from '../geometry.js';
import { maskCrop } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';

/**
 * LabelMe JSON (what the labelme tool opens and labelme2coco reads): `<split>/<stem>.json` beside
 * `<split>/<image>`, one document per image with `shapes` — `rectangle` (two corners), `polygon`, `mask` (labelme ≥
 * 5.3: a base64 PNG of the mask inside its box, the box's corners as points) — and image-level labels as `flags`.
 */
export async function writeLabelMe(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
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
      for (const a of item.annotations) {
        if (!classes.has(a.className)) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        const base = { label: a.className, group_id: null, description: '', flags: {} };
        if (a.type === 'bbox') {
          const g = a.geometry;
          shapes.push({ ...base, shape_type: 'rectangle', points: [[round2(g.x), round2(g.y)], [round2(g.x + g.width), round2(g.y + g.height)]] });
        } else if (a.type === 'polygon') {
          shapes.push({ ...base, shape_type: 'polygon', points: a.geometry.points.map(([x, y]) => [round2(x), round2(y)]) });
        } else if (a.type === 'mask') {
          const crop = maskCrop(a.geometry.rle);
          if (!crop) continue;
          const png = await greyPng(crop.data.map((v) => (v ? 255 : 0)), crop);
          shapes.push({ ...base, shape_type: 'mask', points: [[crop.left, crop.top], [crop.left + crop.width - 1, crop.top + crop.height - 1]], mask: png.toString('base64') });
        } else {
          flags[a.className] = true;
        }
      }
      const key = `${folder}/${stemOf(fileName)}`;
      if (used.has(key)) throw new FormatError(`two images named ${stemOf(fileName)} in ${folder}: LabelMe keeps one JSON per image name`);
      used.add(key);
      const doc = { version: '5.5.0', flags, shapes, imagePath: fileName, imageData: null, imageHeight: height, imageWidth: width };
      await zip.addImage(`${folder}/${fileName}`, item.source);
      await zip.addBuffer(`${key}.json`, JSON.stringify(doc, null, 2));
      stats.imageCount++;
      stats.annotationCount += shapes.length + Object.keys(flags).length;
    }
    return stats;
  });
}


