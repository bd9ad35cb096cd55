import type { Writable } from 'node:stream';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { round2 } from '../geometry.js';
import { encodeCompressedCounts, subsetOf } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { writeZip } from './zip-output.js';

/**
 * Datumaro JSON (CVAT's "Datumaro 1.0", `datum convert` input): `annotations/<subset>.json` with the label
 * categories and one item per image, images under `images/<subset>/`. Boxes are `bbox` [x, y, w, h], polygons
 * flat `points`, masks COCO RLE with compressed counts, image-level labels `label`.
 */
export async function writeDatumaro(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const labelId = new Map(dataset.classes.map((name, index) => [name, index]));
    const subsets = new Map<string, object[]>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const subset = safeEntryName(subsetOf(item.split));
      const fileName = safeEntryName(item.fileName);
      const { width, height } = await sizeOf(item);
      const annotations = item.annotations.map((a, id) => {
        const label_id = labelId.get(a.className);
        if (label_id === undefined) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        const base = { id, attributes: {}, group: 0, label_id };
        switch (a.type) {
          case 'bbox':
            return { ...base, type: 'bbox', bbox: [a.geometry.x, a.geometry.y, a.geometry.width, a.geometry.height].map(round2), z_order: 0 };
          case 'polygon':
            return { ...base, type: 'polygon', points: a.geometry.points.flat().map(round2), z_order: 0 };
          case 'mask':
            return { ...base, type: 'mask', rle: { counts: encodeCompressedCounts(a.geometry.rle.counts), size: a.geometry.rle.size }, z_order: 0 };
          default:
            return { ...base, type: 'label' };
        }
      });
      if (!subsets.has(subset)) subsets.set(subset, []);
      subsets.get(subset)!.push({ id: stemOf(fileName), annotations, attr: {}, image: { path: fileName, size: [height, width] } });
      await zip.addImage(`images/${subset}/${fileName}`, item.source);
      stats.imageCount++;
      stats.annotationCount += annotations.length;
    }
    const categories = { label: { labels: dataset.classes.map((name) => ({ name, parent: '', attributes: [] })), attributes: [] } };
    for (const [subset, items] of subsets) {
      await zip.addBuffer(`annotations/${subset}.json`, JSON.stringify({ info: {}, categories, items }));
    }
    return stats;
  });
}
