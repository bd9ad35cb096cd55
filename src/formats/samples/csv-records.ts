import { createReadStream } from 'node:fs';
import { parse, CsvError } from 'csv-parse';
import { LineError } from './line-reader.js';

/**
 * The rows of a CSV file (header first) with the line each ends on, streamed through csv-parse. Cells are text and
 * are never evaluated; a row with a different number of cells than the header is a LineError naming its line.
 */
export async function* readCsvRecords(path: string, options: { maxRecordBytes: number; maxColumns: number }): AsyncGenerator<{ line: number; cells: string[] }> {
  const parser = createReadStream(path, { highWaterMark: 1 << 20 }).pipe(parse({
    bom: true,
    info: true,
    max_record_size: options.maxRecordBytes,
    skip_empty_lines: true,
    relax_quotes: false,
  }));
  let width = -1;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (width === -1) {
        width = record.length;
        if (width > options.maxColumns) throw new LineError(info.lines, `has ${width} columns; at most ${options.maxColumns} are accepted`);
      } else if (record.length !== width) {
        throw new LineError(info.lines, `has ${record.length} cells where the header has ${width}`);
      }
      yield { line: info.lines, cells: record };
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
