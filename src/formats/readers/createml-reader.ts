import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Annotation, DatasetItem, DatasetSource } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { imageSize } from './files.js';
import { skipMissingImage } from './listed-images.js';
import { addClass, findImage, finite, scanDataset, splitOfPath, type DatasetScan } from './scan.js';

export const CREATEML_SUFFIX = '.createml.json';

interface CreateMlEntry {
  image?: unknown;
  annotations?: { label?: unknown; coordinates?: { x?: unknown; y?: unknown; width?: unknown; height?: unknown } }[];
}

/**
 * Apple CreateML object detection JSON (Roboflow's "CreateML" export: `{split}/_annotations.createml.json` beside the
 * images): a list of `{image, annotations: [{label, coordinates: {x, y, width, height}}]}` where x, y is the box's
 * centre in pixels.
 */
export async function readCreateMl(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files = s.files.filter((f) => f.toLowerCase().endsWith(CREATEML_SUFFIX) || f.toLowerCase().endsWith('createml.json'));
  if (files.length === 0) throw new FormatError('no CreateML JSON (*.createml.json) found');
  const docs = await Promise.all(files.map(async (file) => ({ file, entries: await load(root, file) })));
  const classes: string[] = [];
  for (const { entries } of docs) for (const e of entries) for (const a of e.annotations ?? []) if (typeof a.label === 'string') addClass(classes, a.label.trim());

  const ledger = new ImportLedger();
  let accounted = false;

  async function* items(): AsyncGenerator<DatasetItem> {
    // The ledger accounts for the files once, however often the items are read.
    const first = !accounted;
    accounted = true;
    for (const { file, entries } of docs) {
      for (const [index, entry] of entries.entries()) {
        const where = `${file} entry ${index + 1}`;
        if (typeof entry.image !== 'string' || !entry.image) throw new FormatError(`${where}: "image" must be a file name`);
        const annotations: Annotation[] = (entry.annotations ?? []).map((a) => {
          const c = a.coordinates ?? {};
          const values = [c.x, c.y, c.width, c.height];
          if (typeof a.label !== 'string' || !finite(values) || (values[2] as number) <= 0 || (values[3] as number) <= 0) {
            throw new FormatError(`${where}: every annotation needs a label and coordinates {x, y, width, height} with a positive size`);
          }
          const [x, y, width, height] = values as number[];
          return { type: 'bbox', className: a.label.trim(), geometry: { x: x - width / 2, y: y - height / 2, width, height } };
        });
        const found = findImage(s, entry.image, [dirname(file)]);
        if (!found) {
          if (first) skipMissingImage(ledger, file, entry.image, annotations);
          continue;
        }
        const path = join(s.root, found);
        const size = await imageSize(path);
        yield { split: splitOfPath(file), fileName: path.split('/').pop()!, source: { path }, ...size, annotations };
      }
    }
  }
  return { format: 'createml', projectType: 'object_detection', classes, ledger, items };
}

async function load(root: string, file: string): Promise<CreateMlEntry[]> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(join(root, file), 'utf8'));
  } catch (error) {
    throw new FormatError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(doc)) throw new FormatError(`${file}: a CreateML document is a list of images`);
  return doc as CreateMlEntry[];
}
