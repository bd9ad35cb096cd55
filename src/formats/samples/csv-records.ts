import { createReadStream } from 'node:fs';
import { parse, CsvError } from 'csv-parse';
import { LineError } from './line-reader.js';

export interface CsvRecord {
  /** The line the record ends on. */
  line: number;
  cells: string[];
}

/**
 * The rows of a CSV file (header first) with the line each ends on, streamed through csv-parse and yielded as many
 * rows at a time as the parser has ready (a million rows cost a few thousand awaits, not a million). Cells are text
 * and are never evaluated; a row with a different number of cells than the header is a LineError naming its line.
 */
export async function* readCsvRecords(path: string, options: { maxRecordBytes: number; maxColumns: number }): AsyncGenerator<CsvRecord[]> {
  const parser = createReadStream(path, { highWaterMark: 1 << 20 }).pipe(parse({
    bom: true,
    info: true,
    max_record_size: options.maxRecordBytes,
    skip_empty_lines: true,
  }));
  let width = -1;
  let failure: unknown = null;
  let ended = false;
  let wake: (() => void) | null = null;
  const signal = () => {
    wake?.();
    wake = null;
  };
  parser.on('readable', signal);
  parser.on('end', () => ((ended = true), signal()));
  parser.on('error', (err) => ((failure = err), signal()));
  try {
    for (;;) {
      const batch: CsvRecord[] = [];
      let item: { record: string[]; info: { lines: number } } | null;
      while (batch.length < 5000 && (item = parser.read()) !== null) {
        const { record, info } = item;
        if (width === -1) {
          width = record.length;
          if (width > options.maxColumns) throw new LineError(info.lines, `has ${width} columns; at most ${options.maxColumns} are accepted`);
        } else if (record.length !== width) {
          throw new LineError(info.lines, `has ${record.length} cells where the header has ${width}`);
        }
        batch.push({ line: info.lines, cells: record });
      }
      if (batch.length > 0) {
        yield batch;
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } catch (err) {
    if (err instanceof CsvError) {
      const line = (err as unknown as { lines?: number }).lines ?? 0;
      throw new LineError(line, err.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' ? 'has a different number of cells than the header' : `is not valid CSV (${err.message})`);
    }
    throw err;
  } finally {
    parser.destroy();
  }
}
