/**
 * The checks of the sample modalities (text, tabular, LLM records, audio and video clips), read from a SampleSnapshot
 * of one modality. Ids start with the modality, so they never collide with the image checks or with each other when
 * a project holds several modalities.
 */
import type { SampleModality } from '../../db/schema.js';
import type { CheckDefinition, ParamSpec } from './check-catalog.logic.js';
import { describePersonalData, EMAIL, PHONE } from './personal-data.logic.js';
import { LLM_EMPTY_REASONS, type ColumnFacts, type SampleSnapshot } from './sample-snapshot.logic.js';

type SampleCheck = CheckDefinition<SampleSnapshot>;

const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;
const quoted = (v: string) => JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}…` : v);
const FLAG = (description: string): ParamSpec => ({ type: 'boolean', default: true, description });

/** Classes with far fewer labelled samples than the largest one; one item per such class. */
function labelImbalance(modality: SampleModality): SampleCheck {
  return {
    id: `${modality}_label_imbalance`,
    title: 'Label imbalance',
    modality,
    severity: 'warning',
    description:
      'Classes whose labelled samples number less than 1/max_ratio of the largest class\'s (a multi-label sample counts for each of its classes). ' +
      'One item per such class, worst first.',
    params: { max_ratio: { type: 'number', default: 10, min: 1, max: 1_000_000, description: 'Largest class / this class above which a class is flagged' } },
    message: (n, p) => `${plural(n, 'class', 'classes')} with under 1/${p.max_ratio} of the largest class's samples`,
    run(s, p, findings) {
      const counts = [...s.classCounts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      if (counts.length < 2) return;
      const [top, most] = counts[0];
      for (const [name, n] of counts.slice(1)) {
        const ratio = most / n;
        if (ratio > p.max_ratio) findings.add({}, () => `${name}: ${plural(n, 'sample')}, ${ratio.toFixed(1)}× fewer than ${top} (${most})`, ratio);
      }
    },
  };
}

/** Samples whose content matches e-mail or phone-number patterns. */
function personalDataCheck(modality: SampleModality, where: string): SampleCheck {
  return {
    id: `${modality}_personal_data`,
    title: 'Personal data',
    modality,
    severity: 'warning',
    description: `Samples whose ${where} hold an e-mail address or a phone number (9 to 15 digits written as a number is: with a leading + or separators). Patterns, not proof: someone should look.`,
    params: { email: FLAG('Flag e-mail addresses'), phone: FLAG('Flag phone numbers') },
    message: (n) => `${plural(n, 'sample')} with an e-mail address or phone number`,
    run(s, p, findings) {
      const wanted = (p.email ? EMAIL : 0) | (p.phone ? PHONE : 0);
      for (let i = 0; i < s.size; i++) {
        const found = s.personal[i] & wanted;
        if (found) findings.add({ sample_id: s.ids[i] }, () => `Contains ${describePersonalData(found)}`);
      }
    },
  };
}

/** Median of a sorted array. */
const median = (sorted: Float64Array) => (sorted.length === 0 ? 0 : sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2);

export const TEXT_CHECKS: SampleCheck[] = [
  {
    id: 'text_empty',
    title: 'Empty texts',
    modality: 'text',
    severity: 'error',
    description: 'Text samples whose text is empty or only white space: nothing to learn from.',
    params: {},
    message: (n) => `${plural(n, 'text')} empty or only white space`,
    run(s, _p, findings) {
      for (let i = 0; i < s.size; i++) if (s.blank[i]) findings.add({ sample_id: s.ids[i] }, () => 'The text is empty or only white space');
    },
  },
  {
    id: 'text_duplicates',
    title: 'Duplicate texts',
    modality: 'text',
    severity: 'warning',
    description: 'Texts equal to an earlier sample\'s once trimmed, with runs of white space as one space and ignoring case. Every copy but the first is listed; copies in another split than the first leak between splits.',
    params: {},
    message: (n) => `${plural(n, 'text')} repeat an earlier sample`,
    run(s, _p, findings) {
      const splitOf = new Map<number, string | null>();
      for (let i = 0; i < s.size; i++) if (s.duplicateOf[i]) splitOf.set(s.duplicateOf[i], null);
      for (let i = 0; i < s.size; i++) if (splitOf.has(s.ids[i])) splitOf.set(s.ids[i], s.splits[i]);
      for (let i = 0; i < s.size; i++) {
        const first = s.duplicateOf[i];
        if (!first) continue;
        const a = splitOf.get(first) ?? null;
        const b = s.splits[i];
        const across = a !== null && b !== null && a !== b;
        findings.add({ sample_id: s.ids[i] }, () => `Same text as sample ${first}${across ? ` (in ${b}; the first is in ${a})` : ''}`, across ? 2 : 1);
      }
    },
  },
  {
    id: 'text_length_outliers',
    title: 'Text length outliers',
    modality: 'text',
    severity: 'info',
    description:
      'Texts much shorter or longer than the others: the robust z-score of their length in characters, 0.6745 × (length − median) / MAD ' +
      '(median absolute deviation), is above threshold. Empty texts are left to text_empty; projects with fewer than min_samples texts are not judged.',
    params: {
      threshold: { type: 'number', default: 3.5, min: 0.5, max: 1000, description: 'Robust z-score above which a length is an outlier' },
      min_samples: { type: 'integer', default: 10, min: 3, max: 1_000_000_000, description: 'Fewest non-empty texts to judge' },
    },
    message: (n, p) => `${plural(n, 'text')} with a length beyond a robust z-score of ${p.threshold}`,
    run(s, p, findings) {
      const lengths: number[] = [];
      for (let i = 0; i < s.size; i++) if (!s.blank[i]) lengths.push(s.lengths[i]);
      if (lengths.length < p.min_samples) return;
      const sorted = Float64Array.from(lengths).sort();
      const mid = median(sorted);
      const deviations = sorted.map((v) => Math.abs(v - mid)).sort();
      let spread = median(deviations);
      // Over half the texts of one length: the mean absolute deviation (scaled to agree with the MAD on normal data) instead.
      if (spread === 0) spread = (deviations.reduce((a, b) => a + b, 0) / deviations.length) * 1.2533 * 0.6745;
      if (spread === 0) return;
      for (let i = 0; i < s.size; i++) {
        if (s.blank[i]) continue;
        const z = (0.6745 * (s.lengths[i] - mid)) / spread;
        if (Math.abs(z) > p.threshold) {
          findings.add({ sample_id: s.ids[i] }, () => `${s.lengths[i]} characters (median ${mid}): ${z > 0 ? 'long' : 'short'}, robust z ${z.toFixed(1)}`, Math.abs(z));
        }
      }
    },
  },
  labelImbalance('text'),
  personalDataCheck('text', 'texts'),
];

const column = (c: ColumnFacts) => quoted(c.name);

export const TABULAR_CHECKS: SampleCheck[] = [
  {
    id: 'tabular_missing_values',
    title: 'Missing values',
    modality: 'tabular',
    severity: 'warning',
    description: 'Rows with an empty cell in a feature column (the target is left out: a row without one is unlabelled). One item per row, the rows missing most first.',
    params: {},
    message: (n) => `${plural(n, 'row')} with missing values`,
    run(s, _p, findings) {
      const t = s.tabular;
      if (!t) return;
      for (let i = 0; i < s.size; i++) {
        const n = t.rowMissing[i];
        if (n === 0) continue;
        const first = t.columns[t.rowFirstMissing[i]]?.name ?? '?';
        findings.add({ sample_id: s.ids[i] }, () => `Missing ${quoted(first)}${n > 1 ? ` and ${plural(n - 1, 'more column')}` : ''}`, n);
      }
    },
  },
  {
    id: 'tabular_constant_columns',
    title: 'Constant columns',
    modality: 'tabular',
    severity: 'warning',
    description: 'Feature columns with one value in every row that has one (or none at all): they tell the model nothing. One item per column.',
    params: {},
    message: (n) => `${plural(n, 'column')} with a single value`,
    run(s, _p, findings) {
      const t = s.tabular;
      if (!t || s.size < 2) return;
      for (const c of t.columns) {
        if (!c.constant) continue;
        findings.add({}, () => (c.present === 0 ? `${column(c)} has no value in any row` : `${column(c)} is ${quoted(c.firstValue!)} in every row${c.missing ? ` that has a value (${c.missing} missing)` : ''}`));
      }
    },
  },
  {
    id: 'tabular_id_columns',
    title: 'Identifier columns',
    modality: 'tabular',
    severity: 'warning',
    description:
      'Whole-number or text columns with a different value in every row (distinct values = rows): identifiers, which a model memorises instead of learning from. ' +
      'Judged from min_rows rows on.',
    params: { min_rows: { type: 'integer', default: 20, min: 2, max: 1_000_000_000, description: 'Fewest rows to judge a column by' } },
    message: (n) => `${plural(n, 'column')} with a different value in every row`,
    run(s, p, findings) {
      const t = s.tabular;
      if (!t || s.size < p.min_rows) return;
      for (const c of t.columns) {
        if (c.unique && !c.constant) findings.add({}, () => `${column(c)}: ${s.size} distinct ${c.type} values, one per row (an identifier, not a feature)`);
      }
    },
  },
  {
    id: 'tabular_target_leakage',
    title: 'Target leakage',
    modality: 'tabular',
    severity: 'error',
    description:
      'Feature columns that give the target away: equal to it in every row, or whose every value goes with a single target value ' +
      '(with at least min_rows_per_value rows per value on average, so that identifiers and chance do not count).',
    params: { min_rows_per_value: { type: 'number', default: 2, min: 1, max: 1_000_000, description: 'Rows each value of the column must average to count as determining the target' } },
    message: (n) => `${plural(n, 'column')} giving the target away`,
    run(s, p, findings) {
      const t = s.tabular;
      if (!t || !t.targetVaries) return;
      for (const c of t.columns) {
        if (c.compared < 2) continue;
        if (c.equalsTarget) {
          findings.add({}, () => `${column(c)} equals the target ${quoted(t.target)} in every row`, 2);
        } else if (c.determinesTarget && !c.unique && c.determiningValues >= 2 && c.determiningValues * p.min_rows_per_value <= c.compared) {
          findings.add({}, () => `${column(c)} determines the target ${quoted(t.target)}: each of its ${c.determiningValues} values goes with one target value`, 1);
        }
      }
    },
  },
  {
    id: 'tabular_duplicate_rows',
    title: 'Duplicate rows',
    modality: 'tabular',
    severity: 'warning',
    description:
      'Rows whose feature values are those of an earlier row, leaving out identifier columns (whole-number or text columns whose values never repeat: ' +
      'a record exported twice keeps its row id). Every copy but the first is listed; copies with a different target first.',
    params: {},
    message: (n) => `${plural(n, 'row')} repeat an earlier row`,
    run(s, _p, findings) {
      const t = s.tabular;
      if (!t) return;
      for (let i = 0; i < s.size; i++) {
        const first = t.duplicateOf[i];
        if (!first) continue;
        const differs = t.duplicateTargetDiffers[i] === 1;
        findings.add({ sample_id: s.ids[i] }, () => `Same features as sample ${first}${differs ? ', with a different target' : ''}`, differs ? 2 : 1);
      }
    },
  },
  labelImbalance('tabular'),
  personalDataCheck('tabular', 'text cells'),
];

export const LLM_CHECKS: SampleCheck[] = [
  {
    id: 'llm_empty_responses',
    title: 'Empty responses',
    modality: 'llm',
    severity: 'error',
    description: 'LLM records with an empty or white-space response, chosen or rejected response, or a conversation whose last assistant turn is empty. Prompts without any response are not flagged.',
    params: {},
    message: (n) => `${plural(n, 'record')} with an empty response`,
    run(s, _p, findings) {
      for (let i = 0; i < s.size; i++) {
        const reason = s.blank[i];
        if (reason) findings.add({ sample_id: s.ids[i] }, () => `The record has ${LLM_EMPTY_REASONS[reason]}`);
      }
    },
  },
  labelImbalance('llm'),
  personalDataCheck('llm', 'prompts, responses or messages'),
];

/** Each sample modality's checks, registered by catalog.logic.ts. */
export const SAMPLE_CHECKS: [SampleModality, SampleCheck[]][] = [
  ['text', TEXT_CHECKS],
  ['tabular', TABULAR_CHECKS],
  ['audio', [labelImbalance('audio')]],
  ['video', [labelImbalance('video')]],
  ['llm', LLM_CHECKS],
];
