import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { type Annotation, type DatasetToWrite, type WriteStats } from '../dataset.js';
import { round2 } from '../geometry.js';
import { geometryBox } from '../../imaging/geometry.js';
import { ExportTally } from './export-tally.js';

export const CSV_COLUMNS = ['image', 'split', 'image_width', 'image_height', 'class', 'type', 'x', 'y', 'width', 'height', 'points'];

/**
 * Spreadsheet programs run a cell that starts with one of these as a formula (CSV injection); such text cells get a
 * leading single quote. Numbers are never touched.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function neutraliseCell(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * CSV, one row per annotation (an image without annotations gets one row with empty annotation cells): the box of
 * every geometry in pixels, and polygon points as `x y;x y;…`. What a row cannot hold as it is is tallied (geometryCells).
 */
export async function writeCsv(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  const stringifier = stringify({ header: true, columns: CSV_COLUMNS, cast: { string: neutraliseCell } });
  const piped = new Promise<void>((resolve, reject) => {
    stringifier.on('error', reject);
    output.on('error', reject);
    output.on('finish', resolve);
  });
  stringifier.pipe(output);
  const writeRow = async (cells: (string | number)[]) => {
    if (!stringifier.write(cells)) await once(stringifier, 'drain');
  };
  const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
  for await (const item of dataset.items) {
    const base = [item.fileName, item.split ?? '', item.width ?? '', item.height ?? ''];
    if (item.annotations.length === 0) await writeRow([...base, '', '', '', '', '', '', '']);
    for (const annotation of item.annotations) {
      await writeRow([...base, annotation.className, annotation.type, ...geometryCells(annotation, tally)]);
      stats.annotationCount++;
    }
    stats.imageCount++;
  }
  stringifier.end();
  await piped;
  return stats;
}

/**
 * A row's geometry cells, tallied: a classification's row and an upright box are kept, a plain polygon is kept (its
 * box and points); an object in parts or with holes keeps its first outline only, and every other shape its box
 * (converted); a shape with no box is a row without geometry (skipped).
 */
function geometryCells(annotation: Annotation, tally: ExportTally): (string | number)[] {
  if (annotation.type === 'classification') {
    tally.shape(annotation, 'kept', 'classification');
    return ['', '', '', '', ''];
  }
  const box = geometryBox(annotation.type, annotation.geometry);
  const points = annotation.type === 'polygon' ? annotation.geometry.points.map(([x, y]) => `${round2(x)} ${round2(y)}`).join(';') : '';
  if (!box) {
    tally.shape(annotation, 'skipped', `${annotation.type} (no area in the image)`);
    return ['', '', '', '', points];
  }
  if (annotation.type === 'polygon') {
    if (annotation.geometry.parts || annotation.geometry.holes?.length) tally.shape(annotation, 'converted', 'polygon in parts or with holes→first outline');
    else tally.shape(annotation, 'kept', 'polygon');
  } else if (annotation.type === 'bbox' && !annotation.geometry.rotation) tally.shape(annotation, 'kept', 'bbox');
  else tally.shape(annotation, 'converted', `${annotation.type}${annotation.type === 'bbox' ? ' (rotated)' : ''}→bbox`);
  return [round2(box.x), round2(box.y), round2(box.width), round2(box.height), points];
}
