import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import type { DatasetItem, DatasetSource } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { addClass, requireImage, scanDataset, splitOfPath, type DatasetScan } from './scan.js';

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

  async function* items(): AsyncGenerator<DatasetItem> {
    for (const { file, rows } of files) {
      const header = rows[0];
      for (const [index, row] of rows.slice(1).entries()) {
        const where = `${file} line ${index + 2}`;
        const path = requireImage(s, row[0] ?? '', where, [dirname(file)]);
        const labels = header.slice(1).filter((_, k) => {
          const cell = (row[k + 1] ?? '').trim();
          if (cell !== '0' && cell !== '1' && cell !== '') throw new FormatError(`${where}: class columns hold 0 or 1, got "${cell}"`);
          return cell === '1';
        });
        yield {
          split: splitOfPath(file),
          fileName: path.split('/').pop()!,
          source: { path },
          annotations: labels.map((className) => ({ type: 'classification', className, geometry: {} })),
        };
      }
    }
  }
  return { format: 'multilabel_csv', projectType: 'classification', classes, items };
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
