/**
 * What the sample checks read, built once per report from chunks of one modality's samples: a few numbers per sample
 * (lengths, flags, the id of an earlier copy) and, for tabular samples, a summary per column. The samples' content is
 * not kept: each chunk is reduced as it arrives, so a report holds facts, not texts or rows. Checks never query.
 */
import { createHash } from 'node:crypto';
import type { SampleModality } from '../../db/schema.js';
import { personalData } from './personal-data.logic.js';
import type { SampleChunkRow, TabularLayout } from '../profile/sample-data.repository.js';

/** Why an LLM record counts as having an empty response. */
export const LLM_EMPTY_REASONS = ['', 'an empty response', 'an empty chosen response', 'an empty rejected response', 'an empty last assistant turn'] as const;

/** Distinct values tracked per column before the column is taken as too varied to tell (unique or determining). */
const MAX_TRACKED = 1_000_000;

export interface ColumnFacts {
  name: string;
  /** The inferred type (integer, number, boolean, category, text, date), or the kind of values seen without a schema. */
  type: string;
  missing: number;
  present: number;
  /** Every present value is the same one (or there is none). */
  constant: boolean;
  /** The value of a constant column. */
  firstValue: string | null;
  /** Every row has a value and no two are the same (known up to MAX_TRACKED values). */
  unique: boolean;
  /** Whole numbers or text: the kinds of column an identifier is stored in. */
  idKind: boolean;
  /** Rows with both a value and a target. */
  compared: number;
  /** The column's value is the target's in every compared row. */
  equalsTarget: boolean;
  /** Each value of the column goes with one target value only; null when not known (too many values). */
  determinesTarget: boolean | null;
  /** Distinct values among the compared rows (when determinesTarget is known). */
  determiningValues: number;
}

export interface TabularFacts {
  /** The target column's name (or "label" without a schema). */
  target: string;
  task: 'classification' | 'regression' | null;
  /** The target takes at least two values (else every column trivially determines it). */
  targetVaries: boolean;
  columns: ColumnFacts[];
  /** Per sample: missing cells, and the index of the first missing column (-1 when none). */
  rowMissing: number[];
  rowFirstMissing: number[];
  /** Per sample: the id of an earlier sample with the same features (0 when none), and whether its target differs. */
  duplicateOf: number[];
  duplicateTargetDiffers: Uint8Array;
}

export class SampleSnapshot {
  readonly ids: number[] = [];
  readonly splits: (string | null)[] = [];
  /** Labelled samples per class (every class of a multi-label sample). */
  readonly classCounts = new Map<string, number>();
  /** text: the text's length in characters. */
  readonly lengths: number[] = [];
  /** text: 1 when the text is empty or white space; llm: an index into LLM_EMPTY_REASONS. */
  readonly blank: number[] = [];
  /** text: the id of an earlier sample with the same text (0 when none). */
  readonly duplicateOf: number[] = [];
  /** text, llm, tabular: the personal-data kinds found (a personalData() mask). */
  readonly personal: number[] = [];
  tabular?: TabularFacts;

  constructor(
    readonly projectId: number,
    readonly modality: SampleModality,
  ) {}

  get size(): number {
    return this.ids.length;
  }
}

const isBlank = (v: unknown) => typeof v === 'string' && v.trim() === '';
const digest = (text: string) => createHash('sha1').update(text).digest('base64');
/** A cell or target as compared: trimmed text, numbers and booleans as written; null when missing. */
const key = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === 'string' ? (v.trim() === '' ? null : v.trim()) : String(v));

/** Reduces chunks of one modality's samples, in id order, to a SampleSnapshot. */
export class SampleSnapshotBuilder {
  private readonly snapshot: SampleSnapshot;
  private readonly texts = new Map<string, number>();
  private readonly table?: TableBuilder;

  constructor(projectId: number, modality: SampleModality, layout?: TabularLayout) {
    this.snapshot = new SampleSnapshot(projectId, modality);
    if (modality === 'tabular') this.table = new TableBuilder(layout);
  }

  add(row: SampleChunkRow): void {
    const s = this.snapshot;
    s.ids.push(row.id);
    s.splits.push(row.split);
    const names: string[] = row.labels ? JSON.parse(row.labels) : row.label !== null ? [row.label] : [];
    for (const name of names) s.classCounts.set(name, (s.classCounts.get(name) ?? 0) + 1);
    const data = JSON.parse(row.data) as Record<string, unknown>;
    switch (s.modality) {
      case 'text':
        this.addText(row.id, typeof data.text === 'string' ? data.text : '');
        break;
      case 'llm':
        this.addLlm(data);
        break;
      case 'tabular': {
        const value = row.value === null ? null : JSON.parse(row.value);
        const target = key(row.label ?? (typeof value === 'number' ? value : null));
        s.personal.push(this.table!.add((data.row ?? {}) as Record<string, unknown>, target));
        break;
      }
      default:
        break;
    }
  }

  private addText(id: number, text: string): void {
    const s = this.snapshot;
    s.lengths.push(text.length);
    const blank = text.trim() === '';
    s.blank.push(blank ? 1 : 0);
    let copyOf = 0;
    if (!blank) {
      const k = digest(text.trim().replace(/\s+/g, ' ').toLowerCase());
      const first = this.texts.get(k);
      if (first === undefined) this.texts.set(k, id);
      else copyOf = first;
    }
    s.duplicateOf.push(copyOf);
    s.personal.push(blank ? 0 : personalData(text));
  }

  private addLlm(data: Record<string, unknown>): void {
    const s = this.snapshot;
    const messages = Array.isArray(data.messages) ? (data.messages as { role?: unknown; content?: unknown }[]) : [];
    let lastAssistant: unknown;
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]?.role === 'assistant') {
        lastAssistant = messages[i].content ?? '';
        break;
      }
    }
    const reason = isBlank(data.response) ? 1 : isBlank(data.chosen) ? 2 : isBlank(data.rejected) ? 3 : isBlank(lastAssistant) ? 4 : 0;
    s.blank.push(reason);
    let found = 0;
    for (const field of ['prompt', 'response', 'chosen', 'rejected']) if (typeof data[field] === 'string') found |= personalData(data[field] as string);
    for (const m of messages) if (typeof m?.content === 'string') found |= personalData(m.content);
    s.personal.push(found);
  }

  finish(): SampleSnapshot {
    this.texts.clear();
    if (this.table) this.snapshot.tabular = this.table.finish(this.snapshot.ids);
    return this.snapshot;
  }
}

/** Per-column accumulators of the tabular checks; each set or map is dropped as soon as its answer is known. */
class TableBuilder {
  private readonly names: string[] = [];
  private readonly types: (string | null)[] = [];
  private readonly index = new Map<string, number>();
  /** The row at which a column first appeared (without a schema, columns show up as rows name them). */
  private readonly appeared: number[] = [];
  private readonly missing: number[] = [];
  private readonly present: number[] = [];
  private readonly first: (string | null)[] = [];
  private readonly varied: boolean[] = [];
  private readonly integers: boolean[] = [];
  private readonly strings: boolean[] = [];
  private readonly seen: (Set<string> | null)[] = [];
  /** Per column: the target each value went with (null once too many values to follow, or a conflict). */
  private readonly targets: (Map<string, string> | null)[] = [];
  /** Columns where two rows with the same value had different targets. */
  private readonly conflicting = new Set<number>();
  private readonly equal: boolean[] = [];
  private readonly compared: number[] = [];
  private readonly rowMissing: number[] = [];
  private readonly rowFirstMissing: number[] = [];
  /**
   * Duplicate rows are told at the end, once the identifier columns are known (a repeated record keeps its row id):
   * per row a 64-bit hash of the cells of the columns that cannot be identifiers, a 32-bit hash of each cell of those
   * that can (whole numbers, text), and of the target.
   */
  private readonly baseHash: [IntColumn, IntColumn] = [new IntColumn(), new IntColumn()];
  private readonly cellHash: (IntColumn | null)[] = [];
  private readonly targetHash = new IntColumn();
  private readonly targetName: string;
  private readonly task: 'classification' | 'regression' | null;
  private count = 0;
  private firstTarget: string | null = null;
  private targetVaries = false;

  constructor(layout?: TabularLayout) {
    this.targetName = layout?.target ?? 'label';
    this.task = layout?.task ?? null;
    for (const [name, type] of layout?.columns ?? []) if (name !== layout!.target) this.column(name, type);
  }

  private column(name: string, type: string | null): number {
    const c = this.names.length;
    this.names.push(name);
    this.types.push(type);
    this.index.set(name, c);
    this.appeared.push(this.count);
    this.missing.push(0);
    this.present.push(0);
    this.first.push(null);
    this.varied.push(false);
    this.integers.push(true);
    this.strings.push(true);
    const candidate = type === null || type === 'integer' || type === 'text';
    this.seen.push(candidate ? new Set() : null);
    this.cellHash.push(candidate ? new IntColumn(this.count, NULL_HASH) : null);
    this.targets.push(new Map());
    this.equal.push(true);
    this.compared.push(0);
    return c;
  }

  /** Adds a row; returns the personal-data kinds found in its text cells. */
  add(row: Record<string, unknown>, target: string | null): number {
    for (const name of Object.keys(row)) if (!this.index.has(name) && name !== this.targetName) this.column(name, null);
    if (target !== null) {
      if (this.firstTarget === null) this.firstTarget = target;
      else if (target !== this.firstTarget) this.targetVaries = true;
    }
    let missingHere = 0;
    let firstMissing = -1;
    let personal = 0;
    const base: unknown[] = [];
    for (let c = 0; c < this.names.length; c++) {
      const raw = row[this.names[c]];
      const hashes = this.cellHash[c];
      if (hashes) hashes.push(raw === null || raw === undefined ? NULL_HASH : hash32(typeof raw === 'string' ? `s${raw}` : String(raw), 1));
      else base.push(raw ?? null);
      const k = key(raw);
      if (k === null) {
        this.missing[c]++;
        missingHere++;
        if (firstMissing < 0) firstMissing = c;
        continue;
      }
      this.present[c]++;
      if (this.first[c] === null) this.first[c] = k;
      else if (!this.varied[c] && this.first[c] !== k) this.varied[c] = true;
      if (typeof raw !== 'string') this.strings[c] = false;
      if (typeof raw !== 'number' || !Number.isInteger(raw)) this.integers[c] = false;
      if (typeof raw === 'string') personal |= personalData(raw);
      const seen = this.seen[c];
      if (seen) {
        if (seen.has(k) || seen.size >= MAX_TRACKED) this.seen[c] = null;
        else seen.add(k);
      }
      if (target !== null) {
        this.compared[c]++;
        if (this.equal[c] && k !== target && !(Number(k) === Number(target) && k !== '' && !Number.isNaN(Number(k)))) this.equal[c] = false;
        const map = this.targets[c];
        if (map) {
          const before = map.get(k);
          if (before === undefined) {
            if (map.size >= MAX_TRACKED) this.targets[c] = null;
            else map.set(k, target);
          } else if (before !== target) {
            this.targets[c] = null;
            this.conflicting.add(c);
          }
        }
      }
    }
    this.rowMissing.push(missingHere);
    this.rowFirstMissing.push(firstMissing);
    const text = JSON.stringify(base);
    this.baseHash[0].push(hash32(text, 2));
    this.baseHash[1].push(hash32(text, 3));
    this.targetHash.push(target === null ? NULL_HASH : hash32(target, 4));
    this.count++;
    return personal;
  }

  /** Rows equal in every column but the identifier columns (those whose values never repeat) to an earlier row. */
  private duplicates(ids: number[]): { duplicateOf: number[]; differs: Uint8Array } {
    const compared = this.cellHash.filter((h, c) => h !== null && this.seen[c] === null) as IntColumn[];
    const first = new Map<string, number>();
    const duplicateOf = new Array<number>(this.count).fill(0);
    const differs = new Uint8Array(this.count);
    for (let i = 0; i < this.count; i++) {
      let k = `${this.baseHash[0].at(i)},${this.baseHash[1].at(i)}`;
      for (const h of compared) k += `,${h.at(i)}`;
      const earlier = first.get(k);
      if (earlier === undefined) {
        first.set(k, i);
        continue;
      }
      duplicateOf[i] = ids[earlier];
      differs[i] = this.targetHash.at(earlier) !== this.targetHash.at(i) ? 1 : 0;
    }
    return { duplicateOf, differs };
  }

  finish(ids: number[]): TabularFacts {
    const columns: ColumnFacts[] = this.names.map((name, c) => {
      // Rows before a column first appeared lack it.
      const missing = this.missing[c] + this.appeared[c];
      const present = this.present[c];
      const type = this.types[c] ?? (present === 0 ? 'text' : this.integers[c] ? 'integer' : this.strings[c] ? 'text' : 'mixed');
      const idKind = this.types[c] === null ? this.integers[c] || this.strings[c] : type === 'integer' || type === 'text';
      const map = this.targets[c];
      return {
        name,
        type,
        missing,
        present,
        constant: !this.varied[c],
        firstValue: this.first[c],
        unique: idKind && missing === 0 && this.seen[c] !== null && this.seen[c]!.size === present,
        idKind,
        compared: this.compared[c],
        equalsTarget: this.compared[c] > 0 && this.equal[c],
        determinesTarget: map ? true : this.conflicting.has(c) ? false : null,
        determiningValues: map ? map.size : 0,
      };
    });
    const { duplicateOf, differs } = this.duplicates(ids);
    return {
      target: this.targetName,
      task: this.task,
      targetVaries: this.targetVaries,
      columns,
      rowMissing: this.rowMissing,
      rowFirstMissing: this.rowFirstMissing,
      duplicateOf,
      duplicateTargetDiffers: differs,
    };
  }
}

const NULL_HASH = 0x2545f491;

/** A 32-bit FNV-1a hash with a seed, mixed at the end (murmur3's finaliser). */
function hash32(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ Math.imul(seed, 0x9e3779b1)) | 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** A growing column of 32-bit integers. */
class IntColumn {
  private values: Int32Array;
  private length = 0;

  /** `fill` rows of `value` to start with (rows read before the column appeared). */
  constructor(fill = 0, value = 0) {
    this.values = new Int32Array(Math.max(1024, fill * 2));
    this.values.fill(value, 0, fill);
    this.length = fill;
  }

  push(v: number): void {
    if (this.length === this.values.length) {
      const next = new Int32Array(this.values.length * 2);
      next.set(this.values);
      this.values = next;
    }
    this.values[this.length++] = v;
  }

  at(i: number): number {
    return this.values[i];
  }
}
