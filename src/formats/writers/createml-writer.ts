import type { Writable } from 'node:stream';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { round2 } from '../geometry.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { boxOrTally } from './interop-shared.js';
import { ExportTally } from './export-tally.js';
import { writeZip } from './zip-output.js';

/**
 * CreateML object detection JSON (Apple Create ML, Roboflow's "CreateML" layout): `<split>/_annotations.createml.json`
 * beside the split's images; each box as `{x, y, width, height}` in pixels with x, y its centre. Every other shape
 * (and a rotated box) is written as its envelope box, tallied as converted (the format has nothing else);
 * classifications and shapes with no area are left out and tallied. Items without a split go to `train`.
 */
export async function writeCreateMl(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classes = new Set(dataset.classes);
    const splits = new Map<string, object[]>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const split = item.split ?? 'train';
      const fileName = safeEntryName(item.fileName);
      await sizeOf(item);
      const annotations = [];
      for (const a of item.annotations) {
        if (!classes.has(a.className)) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        const box = boxOrTally(a, tally);
        if (!box) continue;
        annotations.push({ label: a.className, coordinates: { x: round2(box.x + box.width / 2), y: round2(box.y + box.height / 2), width: round2(box.width), height: round2(box.height) } });
      }
      if (!splits.has(split)) splits.set(split, []);
      splits.get(split)!.push({ image: fileName, annotations });
      await zip.addImage(`${split}/${fileName}`, item.source);
      stats.imageCount++;
      stats.annotationCount += annotations.length;
    }
    for (const [split, entries] of splits) await zip.addBuffer(`${split}/_annotations.createml.json`, JSON.stringify(entries, null, 1));
    return stats;
  });
}
