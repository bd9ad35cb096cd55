/**
 * The samples' section of the dataset profile. Counts per modality, split and class are SQL aggregates; text lengths
 * come as numbers from keyset pages (the database measures the texts); LLM record lengths and the tabular columns'
 * statistics are reduced page by page. Memory: one length per text or LLM record, and at most COLUMN_VALUES distinct
 * values in all per tabular column set.
 */
import type { SampleModality } from '../../db/schema.js';
import type { SampleDataRepository, TabularLayout } from './sample-data.repository.js';
import { SAMPLE_MODALITIES, type SampleProfileOut } from './profile.schemas.js';
import { isSplitName } from '../../lib/vocabulary.js';

const PAGE = 5000;
const HISTOGRAM_BINS = 10;
const TOP_VALUES = 10;
/** Distinct values counted per table, shared between its columns (at least 100 each). */
const COLUMN_VALUES = 200_000;

type Splits = SampleProfileOut['splits'];
const noSplits = (): Splits => ({ train: 0, valid: 0, test: 0, unassigned: 0 });
const splitKey = (split: string | null): keyof Splits => (isSplitName(split) ? split : 'unassigned');

export class SampleProfiler {
  constructor(private readonly repository: SampleDataRepository) {}

  /** The section, or undefined for a project without samples. */
  async section(projectId: number): Promise<SampleProfileOut | undefined> {
    const splitRows = await this.repository.splitCounts(projectId);
    if (splitRows.length === 0) return undefined;
    const byModality = new Map<SampleModality, { modality: SampleModality; samples: number; labelled: number; splits: Splits }>();
    const splits = noSplits();
    let total = 0;
    let labelled = 0;
    for (const row of splitRows) {
      let m = byModality.get(row.modality);
      if (!m) byModality.set(row.modality, (m = { modality: row.modality, samples: 0, labelled: 0, splits: noSplits() }));
      m.samples += row.samples;
      m.labelled += row.labelled;
      m.splits[splitKey(row.split)] += row.samples;
      splits[splitKey(row.split)] += row.samples;
      total += row.samples;
      labelled += row.labelled;
    }
    const [labelRows, layout] = await Promise.all([this.repository.labelCounts(projectId), byModality.has('tabular') ? this.repository.tabularLayout(projectId) : undefined]);
    const labels = new Map<string, SampleProfileOut['labels'][number]>();
    for (const row of labelRows) {
      const k = `${row.modality}\u0000${row.label}`;
      let entry = labels.get(k);
      if (!entry) labels.set(k, (entry = { modality: row.modality, name: row.label, samples: 0, by_split: {} }));
      entry.samples += row.samples;
      const split = splitKey(row.split);
      entry.by_split[split] = (entry.by_split[split] ?? 0) + row.samples;
    }
    const lengths: SampleProfileOut['lengths'] = [];
    if (byModality.has('text')) {
      const stats = lengthStats(await this.textLengths(projectId));
      if (stats) lengths.push({ modality: 'text', measures: 'characters of the text', ...stats });
    }
    if (byModality.has('llm')) {
      const stats = lengthStats(await this.llmLengths(projectId));
      if (stats) lengths.push({ modality: 'llm', measures: 'characters of the prompt, responses and messages', ...stats });
    }
    return {
      total,
      labelled,
      splits,
      modalities: SAMPLE_MODALITIES.filter((m) => byModality.has(m)).map((m) => byModality.get(m)!),
      labels: [...labels.values()].sort((a, b) => b.samples - a.samples || a.name.localeCompare(b.name)),
      lengths,
      tabular: byModality.has('tabular') ? await this.tabular(projectId, layout) : null,
    };
  }

  private async textLengths(projectId: number): Promise<number[]> {
    const out: number[] = [];
    for (let after = 0; ; ) {
      const rows = await this.repository.textLengths(projectId, after, PAGE);
      for (const r of rows) if (r.length !== null) out.push(Number(r.length));
      if (rows.length < PAGE) return out;
      after = rows[rows.length - 1].id;
    }
  }

  private async llmLengths(projectId: number): Promise<number[]> {
    const out: number[] = [];
    for (let after = 0; ; ) {
      const rows = await this.repository.chunk(projectId, 'llm', after, PAGE);
      for (const r of rows) {
        const data = JSON.parse(r.data) as Record<string, unknown>;
        let n = 0;
        for (const field of ['prompt', 'response', 'chosen', 'rejected']) if (typeof data[field] === 'string') n += (data[field] as string).length;
        if (Array.isArray(data.messages)) for (const m of data.messages as { content?: unknown }[]) if (typeof m?.content === 'string') n += m.content.length;
        out.push(n);
      }
      if (rows.length < PAGE) return out;
      after = rows[rows.length - 1].id;
    }
  }

  private async tabular(projectId: number, layout: TabularLayout | undefined): Promise<NonNullable<SampleProfileOut['tabular']>> {
    const columns = new Map<string, ColumnStats>();
    const budget = () => Math.max(100, Math.floor(COLUMN_VALUES / Math.max(1, columns.size)));
    for (const [name, type] of layout?.columns ?? []) columns.set(name, new ColumnStats(name, type, name === layout!.target));
    const target = layout ? columns.get(layout.target)! : undefined;
    let rows = 0;
    for (let after = 0; ; ) {
      const page = await this.repository.chunk(projectId, 'tabular', after, PAGE);
      for (const r of page) {
        const row = ((JSON.parse(r.data) as { row?: Record<string, unknown> }).row ?? {}) as Record<string, unknown>;
        for (const name of Object.keys(row)) if (!columns.has(name)) columns.set(name, new ColumnStats(name, null, false, rows));
        const cap = budget();
        for (const c of columns.values()) {
          if (c === target) c.add(layout!.task === 'regression' ? (r.value === null ? null : JSON.parse(r.value)) : r.label, cap);
          else c.add(row[c.name], cap);
        }
        rows++;
      }
      if (page.length < PAGE) break;
      after = page[page.length - 1].id;
    }
    return { target: layout?.target ?? null, task: layout?.task ?? null, rows, columns: [...columns.values()].map((c) => c.out()) };
  }
}

/** min, median, p95, max and a histogram of equal-width bins; undefined when there is nothing to measure. */
function lengthStats(values: number[]): Omit<SampleProfileOut['lengths'][number], 'modality' | 'measures'> | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const p95 = sorted[Math.max(0, Math.ceil(0.95 * n) - 1)];
  const min = sorted[0];
  const max = sorted[n - 1];
  const width = Math.max(1, Math.ceil((max - min + 1) / HISTOGRAM_BINS));
  const bins = Math.ceil((max - min + 1) / width);
  const histogram = Array.from({ length: bins }, (_, k) => ({ from: min + k * width, to: min + (k + 1) * width, samples: 0 }));
  for (const v of sorted) histogram[Math.min(bins - 1, Math.floor((v - min) / width))].samples++;
  return { samples: n, min, median, p95, max, histogram };
}

/** One column's statistics, reduced row by row. */
class ColumnStats {
  private missing: number;
  private numbers = 0;
  private sum = 0;
  private min = Infinity;
  private max = -Infinity;
  private present = 0;
  private capped = false;
  private readonly values = new Map<string, number>();

  constructor(
    readonly name: string,
    private readonly type: string | null,
    private readonly target: boolean,
    /** Rows read before the column first appeared (they lack it). */
    before = 0,
  ) {
    this.missing = before;
  }

  add(value: unknown, cap: number): void {
    if (value === null || value === undefined || value === '') {
      this.missing++;
      return;
    }
    this.present++;
    if (typeof value === 'number' && Number.isFinite(value)) {
      this.numbers++;
      this.sum += value;
      if (value < this.min) this.min = value;
      if (value > this.max) this.max = value;
    }
    const k = String(value);
    const seen = this.values.get(k);
    if (seen !== undefined) this.values.set(k, seen + 1);
    else if (this.values.size < cap) this.values.set(k, 1);
    else this.capped = true;
  }

  out(): NonNullable<SampleProfileOut['tabular']>['columns'][number] {
    const numeric = this.present > 0 && this.numbers === this.present;
    const type = this.type ?? (this.present === 0 ? 'text' : numeric ? 'number' : 'text');
    const base = { name: this.name, type, target: this.target, missing: this.missing, distinct: this.values.size, distinct_capped: this.capped };
    if (numeric) return { ...base, min: this.min, max: this.max, mean: this.sum / this.numbers };
    const top = [...this.values].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, TOP_VALUES);
    return { ...base, top_values: top.map(([value, samples]) => ({ value, samples })) };
  }
}
