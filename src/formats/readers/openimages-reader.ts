import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Annotation, ClassSpec, DatasetSource, Split } from '../dataset.js';
import { splitFromName, stemOf } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import type { AttributeValue } from '../../imaging/class-specs.js';
import { listImage, listedItems, skipMissingImage, type ListedImage } from './listed-images.js';
import type { DatasetScan } from './scan.js';

/** The first columns of an Open Images box file (`train-annotations-bbox.csv`, `oidv6-train-annotations-bbox.csv`). */
export function isOpenImagesHeader(line: string): boolean {
  return /^\s*ImageID\s*,\s*Source\s*,\s*LabelName\s*,\s*Confidence\s*,\s*XMin\s*,\s*XMax\s*,\s*YMin\s*,\s*YMax/i.test(line);
}

/** The flags of an Open Images box, kept as checkbox attributes (1 true, 0 false; -1 "unknown" sets none). */
const FLAGS = ['IsOccluded', 'IsTruncated', 'IsGroupOf', 'IsDepiction', 'IsInside'] as const;
/** Extreme-click points of boxes drawn by clicking (v4+): a box's four clicks, not kept. */
const CLICKS = /^XClick[1-4][XY]$/i;

/** One CSV line, with quoted fields. */
export function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') fields.push(field), (field = '');
    else field += c;
  }
  fields.push(field);
  return fields.map((f) => f.trim());
}

/**
 * Open Images boxes: `<split>-annotations-bbox.csv` (`ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,
 * IsOccluded,IsTruncated,IsGroupOf,IsDepiction,IsInside`, coordinates relative to the image) and the class names of
 * `class-descriptions-boxable.csv` (`/m/011k07,Tortoise`; a label missing there keeps its MID as its name). Images are
 * `<ImageID>.jpg` anywhere in the dataset; the split comes from the CSV's name. The five flags become checkbox
 * attributes, `Source` (`xclick`, `activemil`...) a select attribute; the extreme-click columns some releases add are
 * not kept (each row's clicks are listed as one skipped attribute). Images no row names are kept unlabelled.
 */
export async function readOpenImages(scan: DatasetScan): Promise<DatasetSource> {
  const ledger = new ImportLedger();
  const files: string[] = [];
  for (const file of scan.files.filter((f) => f.toLowerCase().endsWith('.csv'))) {
    const first = (await readFile(join(scan.root, file), 'utf8')).split(/\r?\n/, 1)[0] ?? '';
    if (isOpenImagesHeader(first)) files.push(file);
  }
  if (files.length === 0) throw new FormatError('no Open Images *-annotations-bbox.csv file found');
  const names = await classNames(scan);
  const byId = new Map<string, string>();
  for (const p of scan.images) if (!byId.has(stemOf(p.split('/').pop()!))) byId.set(stemOf(p.split('/').pop()!), p);
  const listed = new Map<string, ListedImage>();
  const classes: string[] = [];
  const sources = new Map<string, Set<string>>();
  const rows = new Map<string, { className: string; box: number[]; attributes: Record<string, AttributeValue> }[]>();
  for (const file of files) {
    const lines = (await readFile(join(scan.root, file), 'utf8')).split(/\r?\n/);
    const header = csvFields(lines[0]);
    const col = (name: string) => header.findIndex((h) => h.toLowerCase() === name.toLowerCase());
    const at = { id: col('ImageID'), source: col('Source'), label: col('LabelName'), xmin: col('XMin'), xmax: col('XMax'), ymin: col('YMin'), ymax: col('YMax') };
    const flags = FLAGS.map((f) => [f, col(f)] as const).filter(([, i]) => i >= 0);
    const clicks = header.map((h, i) => (CLICKS.test(h) ? i : -1)).filter((i) => i >= 0);
    const split = openImagesSplit(file);
    const missing = new Map<string, Annotation[]>();
    for (const [n, line] of lines.entries()) {
      if (n === 0 || !line.trim()) continue;
      const f = csvFields(line);
      const box = [at.xmin, at.xmax, at.ymin, at.ymax].map((i) => Number(f[i]));
      if (!box.every(Number.isFinite)) throw new FormatError(`${file} line ${n + 1}: XMin, XMax, YMin and YMax must be numbers`);
      const mid = f[at.label];
      const className = names.get(mid) ?? mid;
      if (!classes.includes(className)) classes.push(className);
      const attributes: Record<string, AttributeValue> = {};
      for (const [flag, i] of flags) if (f[i] === '1' || f[i] === '0') attributes[flag] = f[i] === '1';
      if (at.source >= 0 && f[at.source]) {
        attributes.Source = f[at.source];
        if (!sources.has(className)) sources.set(className, new Set());
        sources.get(className)!.add(f[at.source]);
      }
      const id = f[at.id];
      if (clicks.some((i) => f[i] !== undefined && f[i] !== '' && f[i] !== '-1')) {
        ledger.skip('attributes', '', { file, item: `extreme clicks of row ${n + 1} (image ${id}, class "${className}")`, reason: 'box click points have no counterpart (the box is kept)' });
      }
      const image = byId.get(id);
      if (!image) {
        const list = missing.get(id) ?? [];
        list.push({ type: 'bbox', className, geometry: { x: 0, y: 0, width: 0, height: 0 } });
        missing.set(id, list);
        continue;
      }
      if (!rows.has(image)) rows.set(image, []);
      rows.get(image)!.push({ className, box, attributes });
      if (!listed.has(image)) listImage(listed, image, split, []);
    }
    for (const [id, list] of missing) skipMissingImage(ledger, file, `${id}.jpg`, list);
  }
  for (const [path, image] of listed) {
    const objects = rows.get(path) ?? [];
    image.annotations = (size) =>
      objects.map(({ className, box: [xmin, xmax, ymin, ymax], attributes }) => ({
        type: 'bbox',
        className,
        geometry: { x: xmin * size.width, y: ymin * size.height, width: (xmax - xmin) * size.width, height: (ymax - ymin) * size.height },
        ...(Object.keys(attributes).length ? { attributes } : {}),
      }));
  }
  const classSpecs = new Map<string, ClassSpec>();
  for (const name of classes) {
    classSpecs.set(name, {
      attributes: [
        ...FLAGS.map((flag) => ({ name: flag, type: 'checkbox' as const })),
        ...(sources.has(name) ? [{ name: 'Source', type: 'select' as const, values: [...sources.get(name)!].sort() }] : []),
      ],
    });
  }
  return { format: 'openimages', projectType: 'object_detection', classes, classSpecs, ledger, items: listedItems(scan, listed) };
}

async function classNames(scan: DatasetScan): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const file = scan.files.find((f) => /(^|\/)([^/]*class-descriptions[^/]*|class_descriptions[^/]*)\.csv$/i.test(f));
  if (!file) return names;
  for (const line of (await readFile(join(scan.root, file), 'utf8')).split(/\r?\n/)) {
    const [mid, name] = csvFields(line);
    if (mid && name && mid !== 'LabelName') names.set(mid, name);
  }
  return names;
}

function openImagesSplit(file: string): Split | null {
  const name = file.split('/').pop()!.toLowerCase().replace(/^oidv\d+-/, '');
  return splitFromName(name.split('-')[0]) ?? null;
}
