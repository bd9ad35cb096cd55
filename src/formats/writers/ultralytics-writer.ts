import type { Writable } from 'node:stream';
import { stringify as toYaml } from 'yaml';
import type { DatasetToWrite, Split, WriteStats } from '../dataset.js';
import { writeYoloLayout } from './yolo-writer.js';
import { ExportTally } from './export-tally.js';

const FOLDER: Record<Split, string> = { train: 'train', valid: 'val', test: 'test' };

/**
 * Ultralytics-ready YOLO: `images/{train,val,test}/`, `labels/{train,val,test}/` and a `data.yaml` that
 * `yolo train data=<unzipped folder>/data.yaml` reads as is — no `path` key (Ultralytics then uses the yaml's own
 * folder), split paths relative to it, `names` as an index map. Ultralytics needs a `val` entry: with no valid
 * split, `val` points at the training images (said in a comment in the file). Label lines as in `yolo`.
 */
export async function writeUltralytics(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeYoloLayout(dataset, output, {
    image: (split, fileName) => `images/${FOLDER[split]}/${fileName}`,
    label: (split, stem) => `labels/${FOLDER[split]}/${stem}.txt`,
    dataYaml: (splits) => {
      const config: Record<string, unknown> = {};
      const trainDir = splits.has('train') ? 'images/train' : `images/${FOLDER[[...splits][0] ?? 'train']}`;
      config.train = trainDir;
      config.val = splits.has('valid') ? 'images/val' : trainDir;
      if (splits.has('test')) config.test = 'images/test';
      config.names = Object.fromEntries(dataset.classes.map((name, index) => [index, name]));
      const note = splits.has('valid') ? '' : '# No valid split in this export: val points at the training images (Ultralytics requires a val entry).\n';
      return `# Ultralytics dataset: yolo train data=data.yaml (paths are relative to this file's folder)\n${note}${toYaml(config)}`;
    },
  }, tally);
}
