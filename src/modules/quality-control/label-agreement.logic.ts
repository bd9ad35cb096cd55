/**
 * Agreement on labels (issue 29): accuracy of class labels against a reference, token-level F1 of text spans, and
 * Krippendorff's alpha (nominal) over any number of annotators with missing values. Pure.
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
 * Krippendorff's alpha for nominal data. `units[u][c]` is coder c's value for unit u, or null when c gave none.
 * Units with fewer than two values are not pairable and are left out. With the coincidences
 * o_vk = Σ_u Σ_{i≠j in u} [v_i = v][v_j = k] / (m_u − 1), n_v = Σ_k o_vk and n = Σ_v n_v:
 *   alpha = 1 − (n − 1) · Σ_{v≠k} o_vk / Σ_{v≠k} n_v · n_k.
 * Null when no unit is pairable; 1 when every value is the same (no disagreement observed or expected: the
 * formula's 0/0, which we report as full agreement rather than leave undefined).
 */
export function krippendorffAlpha(units: readonly (readonly (string | null | undefined)[])[]): number | null {
  const index = new Map<string, number>();
  const pairable: number[][] = [];
  for (const unit of units) {
    const values: number[] = [];
    for (const v of unit) {
      if (v === null || v === undefined) continue;
      let k = index.get(v);
      if (k === undefined) index.set(v, (k = index.size));
      values.push(k);
    }
    if (values.length >= 2) pairable.push(values);
  }
  if (pairable.length === 0) return null;
  const size = index.size;
  const o = new Float64Array(size * size);
  for (const values of pairable) {
    const counts = new Map<number, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    const w = 1 / (values.length - 1);
    for (const [v, nv] of counts) {
      for (const [k, nk] of counts) o[v * size + k] += (v === k ? nv * (nv - 1) : nv * nk) * w;
    }
  }
  const nv = new Float64Array(size);
  let n = 0;
  for (let v = 0; v < size; v++) {
    for (let k = 0; k < size; k++) nv[v] += o[v * size + k];
    n += nv[v];
  }
  let observed = 0;
  let expected = 0;
  for (let v = 0; v < size; v++) {
    for (let k = 0; k < size; k++) {
      if (v === k) continue;
      observed += o[v * size + k];
      expected += nv[v] * nv[k];
    }
  }
  if (expected === 0) return 1;
  return 1 - ((n - 1) * observed) / expected;
}

/** Alpha of several annotators' spans on one text: each token is a unit, its value the token's label or "O". */
export function spanAlpha(text: string, annotators: readonly (readonly TextSpan[] | null)[]): number | null {
  const tokens = tokenize(text);
  const labels = annotators.map((spans) => (spans === null ? null : tokenLabels(tokens, spans)));
  return krippendorffAlpha(tokens.map((_, t) => labels.map((l) => (l === null ? null : (l[t] ?? 'O')))));
}
