import type { Writable } from 'node:stream';
import { stringify as toYaml } from 'yaml';
import type { DatasetToWrite, Split, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { labelLine } from './yolo-writer.js';
import { writeZip } from './zip-output.js';

const FOLDER: Record<Split, string> = { train: 'train', valid: 'val', test: 'test' };

/**
 * Ultralytics-ready YOLO: `images/{train,val,test}/`, `labels/{train,val,test}/` and a `data.yaml` that
 * `yolo train data=<unzipped folder>/data.yaml` reads as is — no `path` key (Ultralytics then uses the yaml's own
 * folder), split paths relative to it, `names` as an index map. Ultralytics needs a `val` entry: with no valid
 * split, `val` points at the training images (said in a comment in the file). Label lines as in `yolo`.
 */
export async function writeUltralytics(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classIndex = new Map(dataset.classes.map((name, index) => [name, index]));
    const polygons = dataset.projectType !== 'object_detection';
    const splits = new Set<Split>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const split = item.split ?? 'train';
      splits.add(split);
      const { width, height } = await sizeOf(item);
      const lines = item.annotations.map((a) => labelLine(a, classIndex, width, height, polygons)).filter((l): l is string => l !== null);
      const fileName = safeEntryName(item.fileName);
      await zip.addImage(`images/${FOLDER[split]}/${fileName}`, item.source);
      await zip.addBuffer(`labels/${FOLDER[split]}/${stemOf(fileName)}.txt`, lines.length ? `${lines.join('\n')}\n` : '');
      stats.imageCount++;
      stats.annotationCount += lines.length;
    }
    const config: Record<string, unknown> = {};
    const trainDir = splits.has('train') ? 'images/train' : `images/${FOLDER[[...splits][0] ?? 'train']}`;
    config.train = trainDir;
    config.val = splits.has('valid') ? 'images/val' : trainDir;
    if (splits.has('test')) config.test = 'images/test';
    config.names = Object.fromEntries(dataset.classes.map((name, index) => [index, name]));
    const note = splits.has('valid') ? '' : '# No valid split in this export: val points at the training images (Ultralytics requires a val entry).\n';
    await zip.addBuffer('data.yaml', `# Ultralytics dataset: yolo train data=data.yaml (paths are relative to this file's folder)\n${note}${toYaml(config)}`);
    return stats;
  });
}
