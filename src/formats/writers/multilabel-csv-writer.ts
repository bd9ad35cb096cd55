import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { type DatasetToWrite, type WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { neutraliseCell } from './csv-writer.js';
import { safeEntryName } from './item-size.js';
import { writeZip } from './zip-output.js';
import { ExportTally } from './export-tally.js';

/**
 * Roboflow's multi-label classification CSV (what the `multilabel_csv` reader takes): `<split>/_classes.csv` with the
 * header `filename, class1, class2, …` and one row per image, 1 under every class the image holds and 0 elsewhere,
 * beside `<split>/<image>`. An image holds a class when any of its annotations is of that class (a box or polygon
 * counts as its class being present: the format has no geometry). Images without a split go under `train/`.
 */
export async function writeMultiLabelCsv(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classes = dataset.classes;
    const index = new Map(classes.map((name, i) => [name, i]));
    const rows = new Map<string, string[][]>();
    const names = new Set<string>();
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const folder = item.split ?? 'train';
      const fileName = safeEntryName(item.fileName);
      if (names.has(`${folder}/${fileName}`)) throw new FormatError(`two images named ${fileName} in ${folder}`);
      names.add(`${folder}/${fileName}`);
      const row = classes.map(() => '0');
      for (const a of item.annotations) {
        const i = index.get(a.className);
        if (i === undefined) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        if (row[i] === '0') stats.annotationCount++;
        // The format has no geometry: any other shape says only that its class is present.
        if (a.type === 'classification') tally.shape(a, 'kept', 'classification');
        else tally.shape(a, 'converted', `${a.type}→class`);
        row[i] = '1';
      }
      if (!rows.has(folder)) rows.set(folder, []);
      rows.get(folder)!.push([fileName, ...row]);
      await zip.addImage(`${folder}/${fileName}`, item.source);
      stats.imageCount++;
    }
    for (const [folder, list] of rows) {
      const text = stringify([['filename', ...classes], ...list], { cast: { string: neutraliseCell } });
      await zip.addBuffer(`${folder}/_classes.csv`, text);
    }
    return stats;
  });
}
