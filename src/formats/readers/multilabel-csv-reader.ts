import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Annotation, DatasetItem, DatasetSource } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { ImportLedger } from '../import-ledger.js';
import { skipMissingImage } from './listed-images.js';
import { addClass, findImage, scanDataset, splitOfPath, type DatasetScan } from './scan.js';

/** The first cell of a multi-label `_classes.csv` header (Roboflow "Multi-Label Classification CSV"). */
export function isMultiLabelHeader(firstLine: string): boolean {
  const first = firstLine.split(',')[0]?.trim().toLowerCase();
  return first === 'filename' || first === 'file_name' || first === 'image';
}

/**
 * Roboflow's multi-label classification CSV: `{split}/_classes.csv` with a header `filename, class1, class2, …` and
 * one row per image holding 1 for every class it has (one-hot). Each 1 becomes an image-level label.
 */
export async function readMultiLabelCsv(root: string, scan?: DatasetScan): Promise<DatasetSource> {
  const s = scan ?? (await scanDataset(root));
  const files: { file: string; rows: string[][] }[] = [];
  for (const file of s.files.filter((f) => f.split('/').pop() === '_classes.csv')) {
    const text = await readFile(join(root, file), 'utf8');
    if (isMultiLabelHeader(text.split(/\r?\n/, 1)[0] ?? '')) files.push({ file, rows: parse(text, file) });
  }
  if (files.length === 0) throw new FormatError('no multi-label _classes.csv (header "filename, class, …") found');
  const classes: string[] = [];
  for (const { rows } of files) for (const name of rows[0].slice(1)) addClass(classes, name);

  const ledger = new ImportLedger();
  let accounted = false;

  async function* items(): AsyncGenerator<DatasetItem> {
    // The ledger accounts for the files once, however often the items are read.
    const first = !accounted;
    accounted = true;
    for (const { file, rows } of files) {
      const header = rows[0];
      for (const [index, row] of rows.slice(1).entries()) {
        const where = `${file} line ${index + 2}`;
        const labels = header.slice(1).filter((_, k) => {
          const cell = (row[k + 1] ?? '').trim();
          if (cell !== '0' && cell !== '1' && cell !== '') throw new FormatError(`${where}: class columns hold 0 or 1, got "${cell}"`);
          return cell === '1';
        });
        const annotations: Annotation[] = labels.map((className) => ({ type: 'classification', className, geometry: {} }));
        const found = findImage(s, row[0] ?? '', [dirname(file)]);
        if (!found) {
          if (first) skipMissingImage(ledger, file, `"${row[0] ?? ''}" (${where})`, annotations);
          continue;
        }
        yield { split: splitOfPath(file), fileName: found.split('/').pop()!, source: { path: join(s.root, found) }, annotations };
      }
    }
  }
  return { format: 'multilabel_csv', projectType: 'classification', classes, ledger, items };
}

function parse(text: string, file: string): string[][] {
  try {
    const rows = parseCsv(text, { trim: true, skip_empty_lines: true, relax_column_count: true }) as string[][];
    if (rows.length === 0 || rows[0].length < 2) throw new Error('the header names no class');
    return rows;
  } catch (error) {
    throw new FormatError(`${file} is not a valid multi-label CSV: ${(error as Error).message}`);
  }
}
