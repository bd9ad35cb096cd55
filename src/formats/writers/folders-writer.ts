import type { Writable } from 'node:stream';
import { type DatasetToWrite, type WriteStats } from '../dataset.js';
import { safeEntryName } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally } from './export-tally.js';

/**
 * Classification zip, one folder per class: `{split}/<class>/<image>`. An image with several labels lands in each
 * of their folders; an image without one is left out (a class-per-folder layout cannot hold it). Items without a
 * split go to `train`.
 */
export async function writeFolders(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      // A folder holds an image's labels only: every other shape is left out (tallied).
      for (const a of item.annotations) tally.shape(a, a.type === 'classification' ? 'kept' : 'skipped', a.type);
      const labels = new Set(item.annotations.filter((a) => a.type === 'classification').map((a) => a.className));
      if (labels.size === 0) continue;
      for (const className of labels) {
        await zip.addImage(`${item.split ?? 'train'}/${safeEntryName(className)}/${safeEntryName(item.fileName)}`, item.source);
      }
      stats.imageCount++;
      stats.annotationCount += labels.size;
    }
    return stats;
  });
}
