import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DatasetItem, DatasetSource } from '../dataset.js';
import { splitFromName, stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { orderedMap } from '../ordered-map.js';
import { exists, imageSize } from './files.js';
import { scanDataset, type DatasetScan } from './scan.js';
import { parseLabels } from './yolo-reader.js';

/** The Darknet layout CVAT's "YOLO 1.1" export writes: obj.data, obj.names, obj_<subset>_data/ and <subset>.txt. */
export const DARKNET_MARKERS = ['obj.data', 'obj.names'];

/**
 * Darknet / CVAT "YOLO 1.1": class names one a line in `obj.names` (or the file `names =` in obj.data points to), images
 * with `<stem>.txt` label files beside them in `obj_<subset>_data/`. The subset name gives the split (`train`,
 * `valid`; CVAT's `default` has none). Box lines only (`class cx cy w h`, normalised). A line whose class index the
 * names do not list is skipped through the ledger (file, line, reason), as YOLO's are; `strict` refuses instead.
 */
export async function readDarknet(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const { names: classes, file: namesFile } = await darknetNames(root);
  const ledger = new ImportLedger();
  let accounted = false;
  const folders = [...new Set(s.images.map((p) => p.split('/').slice(0, -1).join('/')).filter((d) => /(^|\/)obj_[^/]+_data$/.test(d)))];
  if (folders.length === 0) throw new FormatError('no obj_<subset>_data folder with images found beside obj.names');
  const images = s.images.filter((p) => folders.includes(p.split('/').slice(0, -1).join('/')));

  async function* items(): AsyncGenerator<DatasetItem> {
    // The ledger accounts for the files once, however often the items are read (later reads skip the same lines).
    const options = { ledger: accounted ? new ImportLedger() : ledger, namesFrom: namesFile };
    accounted = true;
    yield* orderedMap(images, 16, async (relative) => {
      const path = join(root, relative);
      const size = await imageSize(path);
      const folder = relative.split('/').slice(-2)[0];
      const subset = folder.replace(/^obj_/, '').replace(/_data$/, '');
      const labelPath = join(root, relative.split('/').slice(0, -1).join('/'), `${stemOf(relative.split('/').pop()!)}.txt`);
      const text = (await exists(labelPath)) ? await readFile(labelPath, 'utf8') : '';
      const annotations = parseLabels(text, classes, size.width, size.height, `${folder}/${stemOf(relative.split('/').pop()!)}.txt`, options);
      return { split: splitFromName(subset), fileName: relative.split('/').pop()!, source: { path }, ...size, annotations };
    });
  }
  return { format: 'yolo', projectType: 'object_detection', classes, ledger, items };
}

async function darknetNames(root: string): Promise<{ names: string[]; file: string }> {
  let namesFile = 'obj.names';
  if (await exists(join(root, 'obj.data'))) {
    const text = await readFile(join(root, 'obj.data'), 'utf8');
    const declared = /^\s*names\s*=\s*(.+)$/m.exec(text)?.[1]?.trim();
    if (declared && !(await exists(join(root, namesFile)))) namesFile = declared.replace(/\\/g, '/').split('/').pop()!;
  }
  if (!(await exists(join(root, namesFile)))) throw new FormatError(`the class list ${namesFile} is not in the dataset`);
  const names = (await readFile(join(root, namesFile), 'utf8')).split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  if (names.length === 0) throw new FormatError(`${namesFile} lists no class names`);
  return { names, file: namesFile };
}
