/**
 * Readers of the sample import files. Each yields the rows to store, one per line or record, checking every rule
 * on the way (a broken rule is a LineError naming the line); imports read a file twice — once to check it whole,
 * once to store it — so a bad line stores nothing and no file is ever held in memory.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { ColumnProfile, convertCell, type ColumnType } from '../../formats/samples/column-types.js';
import { readCsvRecords } from '../../formats/samples/csv-records.js';
import { LineError, parseJsonLine, readLines } from '../../formats/samples/line-reader.js';
import { inputIssues, textProblem } from '../../http/input-guard.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';
import { normaliseLlm, SampleRuleError, storedLabels, type StoredLabels } from './sample-rules.logic.js';
import type { Modality } from './samples.schemas.js';

export const MAX_LINE_BYTES = 4 * 1024 * 1024;
export const MAX_COLUMNS = 1000;

/** A row to insert, before the project and timestamps are added. */
export interface ReadSample extends StoredLabels {
  line: number;
  modality: Modality;
  split: string | null;
  data: string;
  metadata: string | null;
  /** Media samples: the file inside the import and what it holds. */
  media?: { path: string; name: string };
}

function rule<T>(line: number, work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof SampleRuleError) throw new LineError(line, err.message);
    throw err;
  }
}

function splitOf(line: number, value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !(SPLIT_NAMES as readonly string[]).includes(value)) throw new LineError(line, `split must be one of ${SPLIT_NAMES.join(', ')}`);
  return value;
}

const metadataOf = (rest: Record<string, unknown>) => (Object.keys(rest).length > 0 ? JSON.stringify(rest) : null);

/**
 * A record read from an import file obeys the rule of JSON bodies (input-guard): no NUL in any string, no control
 * character under a name key, no infinite number. Class names are held to the name rule where they are read
 * (`className`). A record that breaks it is its line's error, so the import stores nothing.
 */
function checkRecord(line: number, record: Record<string, unknown>): Record<string, unknown> {
  const [issue] = inputIssues(record, []);
  if (issue) throw new LineError(line, `has in the field "${issue.loc.join('.')}" a value that breaks a rule: ${issue.msg}`);
  return record;
}

export interface TextFields {
  text: string;
  label: string;
  spans: string;
  /** Whether the label and spans field names were given (then they must exist) or are the defaults. */
  explicit: { label: boolean; spans: boolean };
}

/** JSONL (a file whose first character is `{`) or CSV with a header; field names as configured. */
export async function* readTextSamples(path: string, fields: TextFields, isJsonl: boolean): AsyncGenerator<ReadSample[]> {
  const toSample = (line: number, record: Record<string, unknown>, fromCsv: boolean): ReadSample => {
    checkRecord(line, record);
    const text = record[fields.text];
    if (typeof text !== 'string' || text.length === 0) throw new LineError(line, `has no text in the field "${fields.text}"`);
    let spans = record[fields.spans];
    if ((spans === undefined || spans === null || spans === '') && fields.spans === 'spans') spans = record.entities;
    let label = record[fields.label];
    if (fromCsv) {
      if (typeof spans === 'string' && spans !== '') spans = parseCell(line, fields.spans, spans);
      if (typeof label === 'string' && label.startsWith('[')) label = parseCell(line, fields.label, label);
    }
    if (spans === '') spans = null;
    // Other fields of a JSONL line are kept as metadata (a loop: rest destructuring with computed keys is slow).
    let extra: Record<string, unknown> | null = null;
    if (!fromCsv) {
      for (const key in record) {
        if (key !== fields.text && key !== fields.label && key !== fields.spans && key !== 'entities' && key !== 'split') (extra ??= {})[key] = record[key];
      }
    }
    const data = { text };
    return {
      line,
      modality: 'text',
      split: splitOf(line, record.split),
      data: JSON.stringify(data),
      metadata: extra && JSON.stringify(extra),
      ...rule(line, () => storedLabels('text', data, { label, spans })),
    };
  };
  if (isJsonl) {
    for await (const lines of readLines(path, MAX_LINE_BYTES)) yield lines.map(({ line, text }) => toSample(line, parseJsonLine(line, text), false));
    return;
  }
  let header: string[] | null = null;
  for await (const records of readCsvRecords(path, { maxRecordBytes: MAX_LINE_BYTES, maxColumns: MAX_COLUMNS })) {
    const out: ReadSample[] = [];
    for (const { line, cells } of records) {
      if (!header) {
        header = cells;
        if (!header.includes(fields.text)) throw new LineError(line, `has no column "${fields.text}" (columns: ${header.join(', ')})`);
        if (fields.explicit.label && !header.includes(fields.label)) throw new LineError(line, `has no column "${fields.label}"`);
        if (fields.explicit.spans && !header.includes(fields.spans)) throw new LineError(line, `has no column "${fields.spans}"`);
        continue;
      }
      const record: Record<string, unknown> = {};
      header.forEach((name, i) => (record[name] = cells[i]));
      out.push(toSample(line, record, true));
    }
    if (out.length > 0) yield out;
  }
}

/** A JSON document inside a CSV cell (spans, or a multi-label list): parsed, never evaluated. */
function parseCell(line: number, field: string, cell: string): unknown {
  try {
    return JSON.parse(cell);
  } catch {
    throw new LineError(line, `has a "${field}" cell that is not valid JSON`);
  }
}

export interface TabularSchema {
  target: string;
  task: 'classification' | 'regression';
  /** Every column in file order, the target included. */
  columns: [string, ColumnType][];
  classes: string[];
}

/** First pass over a tabular CSV: checks its shape and infers each column's type and the task. */
export async function inferTabularSchema(path: string, target: string, task?: 'classification' | 'regression'): Promise<{ schema: TabularSchema; rows: number }> {
  let header: string[] | null = null;
  let profiles: ColumnProfile[] = [];
  let rows = 0;
  let targetIndex = -1;
  const targetValues = new Set<string>();
  for await (const records of readCsvRecords(path, { maxRecordBytes: MAX_LINE_BYTES, maxColumns: MAX_COLUMNS })) for (const { line, cells } of records) {
    if (!header) {
      header = cells.map((c) => c.trim());
      const seen = new Set<string>();
      for (const name of header) {
        if (name === '') throw new LineError(line, 'has an empty column name');
        const problem = textProblem(name, true);
        if (problem) throw new LineError(line, `has a column name that ${problem}`);
        if (seen.has(name)) throw new LineError(line, `names the column "${name}" twice`);
        seen.add(name);
      }
      targetIndex = header.indexOf(target);
      if (targetIndex === -1) throw new LineError(line, `has no target column "${target}" (columns: ${header.join(', ')})`);
      profiles = header.map(() => new ColumnProfile());
      continue;
    }
    rows++;
    for (let i = 0; i < cells.length; i++) {
      // The target's values become class names.
      const problem = textProblem(cells[i], i === targetIndex);
      if (problem) throw new LineError(line, `has in the column "${header[i]}" a value that ${problem}`);
      profiles[i].add(cells[i]);
    }
    const t = cells[targetIndex];
    if (t !== '' && targetValues.size <= 10_000) targetValues.add(t);
  }
  if (!header) throw new LineError(1, 'is missing: the file is empty (a header row is required)');
  const columns = header.map((name, i) => [name, profiles[i].type()] as [string, ColumnType]);
  const targetType = columns[targetIndex][1];
  const inferred = targetType === 'number' || (targetType === 'integer' && targetValues.size > 20) ? 'regression' : 'classification';
  const chosen = task ?? inferred;
  if (chosen === 'regression' && targetType !== 'number' && targetType !== 'integer') {
    throw new LineError(1, `names the target "${target}", whose values are not all numbers, so it cannot be a regression target`);
  }
  if (chosen === 'classification' && targetValues.size > 10_000) throw new LineError(1, `names the target "${target}", which has more than 10,000 distinct values`);
  if (chosen === 'classification') {
    for (const value of targetValues) if (value.trim() === '' || value.length > 200) throw new LineError(1, `target value "${value.slice(0, 40)}" is not a usable class name`);
  }
  if (chosen === 'classification' && targetType === 'number') columns[targetIndex][1] = 'category';
  const classes = chosen === 'classification' ? [...targetValues].sort() : [];
  return { schema: { target, task: chosen, columns, classes }, rows };
}

/** Second pass: the rows, typed by the schema, the target as label (classification) or value (regression). */
export async function* readTabularSamples(path: string, schema: TabularSchema): AsyncGenerator<ReadSample[]> {
  let first = true;
  const targetIndex = schema.columns.findIndex(([name]) => name === schema.target);
  for await (const records of readCsvRecords(path, { maxRecordBytes: MAX_LINE_BYTES, maxColumns: MAX_COLUMNS })) {
    const out: ReadSample[] = [];
    for (const { line, cells } of records) {
      if (first) {
        first = false;
        continue;
      }
      const row: Record<string, unknown> = {};
      for (let i = 0; i < cells.length; i++) if (i !== targetIndex) row[schema.columns[i][0]] = convertCell(cells[i], schema.columns[i][1]);
      const t = cells[targetIndex];
      const labels = schema.task === 'classification'
        ? { label: t === '' ? null : t }
        : { value: t === '' ? null : Number(t) };
      out.push({ line, modality: 'tabular', split: null, data: JSON.stringify({ row }), metadata: null, ...rule(line, () => storedLabels('tabular', { row }, labels)) });
    }
    if (out.length > 0) yield out;
  }
}

/** What a media file of an import holds: checked once, in the first pass. */
export interface MediaFacts {
  sha256: string;
  size: number;
  mime: string;
  ext: string;
  durationS: number | null;
  sampleRate: number | null;
  fps: number | null;
  channels: number | null;
}

export const MEDIA_FIELDS = ['file', 'audio', 'video'] as const;

/**
 * JSONL of LLM records, or of audio/video clips naming their files (`file`, `audio` or `video`) inside the import.
 * `media` resolves a name to a checked file (or throws a LineError), and returns its facts.
 */
export async function* readJsonlSamples(
  path: string,
  modality: 'audio' | 'video' | 'llm',
  media: (line: number, name: unknown) => Promise<{ path: string; name: string; facts: MediaFacts }>,
): AsyncGenerator<ReadSample[]> {
  for await (const lines of readLines(path, MAX_LINE_BYTES)) for (const { line, text } of lines) {
    const record = checkRecord(line, parseJsonLine(line, text));
    if (modality === 'llm') {
      const { prompt, response, chosen, rejected, messages, label, rating, value, split, ...rest } = record;
      const data = rule(line, () => normaliseLlm({ prompt, response, chosen, rejected, messages }));
      const v = value ?? (rating === undefined ? undefined : { rating });
      yield [{ line, modality, split: splitOf(line, split), data: JSON.stringify(data), metadata: metadataOf(rest), ...rule(line, () => storedLabels('llm', data, { label, value: v })) }];
      continue;
    }
    const { file, audio, video, label, segments, spans, transcript, value, split, ...rest } = record;
    const name = file ?? (modality === 'audio' ? audio : video);
    const problem = typeof name === 'string' ? textProblem(name, true) : null;
    if (problem) throw new LineError(line, `names a file whose name ${problem}`);
    const found = await media(line, name);
    const f = found.facts;
    const data: Record<string, unknown> = { file: found.name, mime_type: f.mime, size_bytes: f.size, duration_s: f.durationS };
    if (f.sampleRate !== null) data.sample_rate = f.sampleRate;
    if (f.channels !== null && modality === 'audio') data.channels = f.channels;
    if (f.fps !== null) data.fps = f.fps;
    const v = value ?? transcript;
    yield [{
      line,
      modality,
      split: splitOf(line, split),
      data: JSON.stringify(data),
      metadata: metadataOf(rest),
      media: { path: found.path, name: found.name },
      ...rule(line, () => storedLabels(modality, data, { label, spans: segments ?? spans, value: v })),
    }];
  }
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}
