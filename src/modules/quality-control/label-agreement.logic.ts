/**
 * Agreement on labels (issue 29): accuracy of class labels against a reference, token-level F1 of text spans, and
 * Krippendorff's alpha (nominal, or with any difference function) over any number of annotators with missing values. Pure.
 */
import { f1Of, ratio, type Counts } from './shape-scores.logic.js';

/** A labelled character span of a text: [start, end) in UTF-16 code units, as samples store them. */
export interface TextSpan {
  start: number;
  end: number;
  label: string;
}

/** The share of items whose label equals the reference's (`null` when no item has both); missing on either side skips it. */
export function accuracy(reference: readonly (string | null)[], labels: readonly (string | null)[]): number | null {
  let both = 0;
  let equal = 0;
  for (let i = 0; i < reference.length; i++) {
    if (reference[i] === null || labels[i] === null || labels[i] === undefined) continue;
    both++;
    if (reference[i] === labels[i]) equal++;
  }
  return ratio(equal, both);
}

/** The tokens of a text: maximal runs of non-whitespace, as [start, end). */
export function tokenize(text: string): [number, number][] {
  const tokens: [number, number][] = [];
  const re = /\S+/g;
  for (let m = re.exec(text); m; m = re.exec(text)) tokens.push([m.index, m.index + m[0].length]);
  return tokens;
}

/**
 * Each token's label under the spans: the label of a span that overlaps the token by at least one character
 * (the first such span in start order), or null. Tokens outside every span are null ("O").
 */
export function tokenLabels(tokens: readonly [number, number][], spans: readonly TextSpan[]): (string | null)[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  return tokens.map(([s, e]) => sorted.find((sp) => sp.start < e && sp.end > s)?.label ?? null);
}

/**
 * Token-level F1 of `spans` against `reference` on one text: each (token, label) pair is an item; a pair in both is a
 * true positive, in `spans` only a false positive, in the reference only a false negative. F1 = 2TP/(2TP+FP+FN),
 * 1 when neither marks anything.
 */
export function spanTokenCounts(text: string, reference: readonly TextSpan[], spans: readonly TextSpan[]): Counts {
  const tokens = tokenize(text);
  const ref = tokenLabels(tokens, reference);
  const ann = tokenLabels(tokens, spans);
  const c: Counts = { tp: 0, fp: 0, fn: 0 };
  for (let i = 0; i < tokens.length; i++) {
    if (ref[i] !== null && ref[i] === ann[i]) c.tp++;
    else {
      if (ann[i] !== null) c.fp++;
      if (ref[i] !== null) c.fn++;
    }
  }
  return c;
}

export function spanTokenF1(text: string, reference: readonly TextSpan[], spans: readonly TextSpan[]): number {
  return f1Of(spanTokenCounts(text, reference, spans));
}

/**
 * Krippendorff's difference function δ(a, b) ≥ 0, δ(a, a) = 0; `pairSum`, where given, is Σ δ over every ordered pair
 * of the values (each distinct value with its count) in one pass, for metrics with a closed form.
 */
export type Distance<T> = ((a: T, b: T) => number) & { pairSum?: (values: readonly T[], counts: Float64Array) => number };
/** Nominal: values agree or they do not. */
export const nominal: Distance<unknown> = (a, b) => (a === b ? 0 : 1);
/**
 * Interval: the squared difference (Krippendorff's δ² for interval data). Over all ordered pairs of n values,
 * Σ (x_i − x_j)² = 2n Σ (x_i − x̄)²: linear, where pairing thousands of distinct numbers would not be.
 */
export const interval: Distance<number> = Object.assign((a: number, b: number) => (a - b) ** 2, {
  pairSum(values: readonly number[], counts: Float64Array): number {
    let n = 0;
    let sum = 0;
    values.forEach((x, i) => ((n += counts[i]), (sum += counts[i] * x)));
    const mean = sum / n;
    return 2 * n * values.reduce((s, x, i) => s + counts[i] * (x - mean) ** 2, 0);
  },
});

/** One unit (an item): each coder's value, null or undefined where the coder gave none. */
export type CodedUnit<T> = readonly (readonly [coder: number, value: T | null | undefined])[];

/**
 * Krippendorff's alpha with any difference function δ, over any number of coders with missing values, and each
 * coder's alpha against the others. Units with fewer than two values are not pairable and are left out. With m_u the
 * values of unit u and n their total over the pairable units:
 *   D_o = (1/n) Σ_u Σ_{i≠j in u} δ(v_i, v_j) / (m_u − 1),  D_e = Σ_{i≠j over all n values} δ(v_i, v_j) / (n (n − 1)),
 *   alpha = 1 − D_o / D_e.
 * A coder's alpha keeps D_e and takes D_o over their own pairs only: the mean over their pairable units of
 * Σ_{j≠them} δ / (m_u − 1), so that the project's alpha is the coders' alphas weighted by their values. Values are
 * counted by distinct value (keyed by `key`) and D_e takes δ once per pair of distinct values, so many equal values
 * (tokens labelled "O") stay cheap, or sums it in one pass where the metric has a closed form (interval).
 * Null when no unit is pairable (a coder: none of theirs is); 1 when no disagreement is expected (every value the
 * same: the formula's 0/0, reported as full agreement rather than left undefined).
 */
export function krippendorff<T>(units: readonly CodedUnit<T>[], distance: Distance<T>, key: (v: T) => unknown = (v) => v): { alpha: number | null; coders: Map<number, number | null> } {
  const index = new Map<unknown, number>();
  const values: T[] = [];
  const pairable: [number, number][][] = [];
  const coders = new Map<number, number | null>();
  for (const unit of units) {
    const given: [number, number][] = [];
    for (const [coder, v] of unit) {
      if (v === null || v === undefined) continue;
      const k = key(v);
      let i = index.get(k);
      if (i === undefined) index.set(k, (i = values.push(v) - 1));
      given.push([coder, i]);
    }
    if (given.length >= 2) pairable.push(given);
  }
  const counts = new Float64Array(values.length);
  for (const unit of pairable) for (const [, i] of unit) counts[i]++;
  const n = counts.reduce((s, c) => s + c, 0);
  let expected = distance.pairSum?.(values, counts) ?? 0;
  if (!distance.pairSum) for (let a = 0; a < values.length; a++) for (let b = a + 1; b < values.length; b++) expected += 2 * counts[a] * counts[b] * distance(values[a], values[b]);
  const own = new Map<number, { observed: number; units: number }>();
  let observed = 0;
  for (const unit of pairable) {
    for (const [coder, i] of unit) {
      // Equal values add nothing, so the value paired with itself need not be told apart from its equals.
      let d = 0;
      for (const [, j] of unit) if (j !== i) d += distance(values[i], values[j]);
      d /= unit.length - 1;
      observed += d;
      const o = own.get(coder) ?? { observed: 0, units: 0 };
      own.set(coder, { observed: o.observed + d, units: o.units + 1 });
    }
  }
  for (const unit of units) for (const [coder] of unit) if (!own.has(coder)) coders.set(coder, null);
  const alphaOf = (dO: number) => (expected === 0 ? 1 : 1 - (dO * n * (n - 1)) / expected);
  for (const [coder, o] of own) coders.set(coder, alphaOf(o.observed / o.units));
  return { alpha: pairable.length === 0 ? null : alphaOf(observed / n), coders };
}

/**
 * Krippendorff's alpha of positional units: `units[u][c]` is coder c's value for unit u, or null when c gave none.
 * Nominal unless another δ is given (see krippendorff).
 */
export function krippendorffAlpha<T = string>(units: readonly (readonly (T | null | undefined)[])[], distance: Distance<T> = nominal): number | null {
  return krippendorff(units.map((u) => u.map((v, c) => [c, v] as const)), distance).alpha;
}

/** Alpha of several annotators' spans on one text: each token is a unit, its value the token's label or "O". */
export function spanAlpha(text: string, annotators: readonly (readonly TextSpan[] | null)[]): number | null {
  const tokens = tokenize(text);
  const labels = annotators.map((spans) => (spans === null ? null : tokenLabels(tokens, spans)));
  return krippendorffAlpha(tokens.map((_, t) => labels.map((l) => (l === null ? null : (l[t] ?? 'O')))));
}
