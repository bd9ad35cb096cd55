import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { type DatasetToWrite, type WriteStats } from '../dataset.js';
import { writeChunk } from './zip-output.js';
import { ExportTally, WITH_ATTRIBUTES } from './export-tally.js';

/**
 * JSON Lines, one image a line: `{"image", "split", "width", "height", "annotations": [{"class", "type",
 * "geometry", "attributes"?, "group_id"?, "skeleton"?}]}` with geometry in the API's shapes (pixels, origin top-left);
 * keypoints of a class with a skeleton carry it (`{points, edges, flip_pairs}`: the format has no class header, and
 * a line read alone keeps its meaning); a video frame's track shapes carry their track in the `track_id` attribute.
 */
export async function writeJsonl(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
  let batch = '';
  for await (const item of dataset.items) {
    batch += `${JSON.stringify({
      image: item.fileName,
      split: item.split,
      width: item.width ?? null,
      height: item.height ?? null,
      annotations: item.annotations.map((a) => ({
        class: a.className,
        type: a.type,
        geometry: a.geometry,
        ...(a.attributes && Object.keys(a.attributes).length > 0 ? { attributes: a.attributes } : {}),
        ...(a.groupId ? { group_id: a.groupId } : {}),
        ...(a.type === 'keypoints' && dataset.classSpecs?.get(a.className)?.skeleton ? { skeleton: dataset.classSpecs.get(a.className)!.skeleton } : {}),
      })),
    })}\n`;
    stats.imageCount++;
    stats.annotationCount += item.annotations.length;
    for (const a of item.annotations) tally.shape(a, 'kept', a.type, WITH_ATTRIBUTES);
    if (batch.length >= 1 << 16) {
      await writeChunk(output, batch);
      batch = '';
    }
  }
  if (batch) await writeChunk(output, batch);
  output.end();
  await finished(output);
  return stats;
}
