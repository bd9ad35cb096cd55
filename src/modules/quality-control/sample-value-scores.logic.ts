/**
 * How an answer on a sample is scored against its ground truth where it is not a single class or spans (issue 29),
 * pure and in one place. Each figure is taken only over the samples where both the truth and the answer give the
 * thing scored (as class accuracy skips a sample where either gave no class):
 *
 * - Multi-label classes: the Jaccard index |T ∩ A| / |T ∪ A| of the two class sets, averaged over the samples where
 *   either side gives two or more classes (one class against one class stays with class accuracy).
 * - Tabular numeric target: the mean absolute error |t − a|, in the target's own units (an error of 2 on a price in
 *   thousands reads as 2 thousand; a squared measure would not).
 * - LLM records: preference agreement, the share of pairs where the answer prefers the same response as the truth
 *   (`chosen`, `rejected` or `tie`, a tie a third answer, not half of one), and the rating's mean absolute
 *   difference (ratings are 1–10: 0 is exact, 1 one step off).
 * - Audio transcripts: the word error rate, (S + D + I) / N, the fewest word substitutions, deletions and insertions
 *   that turn the reference into the answer over the reference's word count, summed over the clips before dividing
 *   (micro, so a long clip weighs by its words). Words are compared lower-cased, with punctuation other than an
 *   apostrophe inside a word dropped ("Hello, world!" = "hello world"). A clip whose reference has no word adds its
 *   answer's words as insertions; with no reference word at all the rate is null.
 */

export type LlmValue = { rating?: number; preference?: 'chosen' | 'rejected' | 'tie' };
/** A sample's value as stored: regression target (number), transcript (string) or LLM rating/preference. */
export type SampleValue = number | string | LlmValue | null;

/** Jaccard index of two class sets; 1 when both are empty. */
export function labelJaccard(truth: readonly string[], answer: readonly string[]): number {
  const t = new Set(truth);
  const a = new Set(answer);
  const union = new Set([...t, ...a]).size;
  if (union === 0) return 1;
  let both = 0;
  for (const c of a) if (t.has(c)) both++;
  return both / union;
}

/** The words of a transcript as compared: lower-cased letters, digits and in-word apostrophes. */
export function transcriptWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu) ?? [];
}

/** Word-level edit distance (substitutions + deletions + insertions) from the reference to the answer, and the reference's word count. */
export function wordErrors(reference: string, answer: string): { errors: number; words: number } {
  const ref = transcriptWords(reference);
  const hyp = transcriptWords(answer);
  let prev = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const row = [i];
    for (let j = 1; j <= hyp.length; j++) row.push(Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ref[i - 1] === hyp[j - 1] ? 0 : 1)));
    prev = row;
  }
  return { errors: prev[hyp.length], words: ref.length };
}

const isLlm = (v: SampleValue | undefined): v is LlmValue => typeof v === 'object' && v !== null;

/** What one annotator's values add up to over their ground-truth samples; `valueFigures` turns it into the report's figures. */
export interface ValueTally {
  jaccard: number[];
  absErrors: number[];
  preferences: { equal: number; both: number };
  ratingDiffs: number[];
  transcript: { errors: number; words: number; clips: number };
}

export const emptyTally = (): ValueTally => ({ jaccard: [], absErrors: [], preferences: { equal: 0, both: 0 }, ratingDiffs: [], transcript: { errors: 0, words: 0, clips: 0 } });

/**
 * Adds one ground-truth sample to the tally: the truth's and the answer's class sets (empty: none given) and values.
 */
export function tallyValues(tally: ValueTally, truth: { labels: readonly string[]; value: SampleValue }, answer: { labels: readonly string[]; value: SampleValue }): void {
  if (truth.labels.length > 0 && answer.labels.length > 0 && (truth.labels.length > 1 || answer.labels.length > 1)) tally.jaccard.push(labelJaccard(truth.labels, answer.labels));
  const [t, a] = [truth.value, answer.value];
  if (typeof t === 'number' && typeof a === 'number') tally.absErrors.push(Math.abs(t - a));
  if (typeof t === 'string' && typeof a === 'string') {
    const e = wordErrors(t, a);
    tally.transcript.errors += e.errors;
    tally.transcript.words += e.words;
    tally.transcript.clips++;
  }
  if (isLlm(t) && isLlm(a)) {
    if (t.preference !== undefined && a.preference !== undefined) {
      tally.preferences.both++;
      if (t.preference === a.preference) tally.preferences.equal++;
    }
    if (t.rating !== undefined && a.rating !== undefined) tally.ratingDiffs.push(Math.abs(t.rating - a.rating));
  }
}

export interface ValueFigures {
  /** Mean Jaccard index of the class sets over the multi-label samples; null when none. */
  label_jaccard: number | null;
  /** Mean absolute error of the numeric targets; null when none. */
  value_mae: number | null;
  /** Share of LLM pairs with the truth's preference; null when none. */
  preference_accuracy: number | null;
  /** Mean absolute difference of LLM ratings; null when none. */
  rating_mae: number | null;
  /** Word error rate of the transcripts, micro over the clips; null when no clip (or no reference word). */
  transcript_wer: number | null;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length);

export function valueFigures(t: ValueTally): ValueFigures {
  return {
    label_jaccard: mean(t.jaccard),
    value_mae: mean(t.absErrors),
    preference_accuracy: t.preferences.both === 0 ? null : t.preferences.equal / t.preferences.both,
    rating_mae: mean(t.ratingDiffs),
    transcript_wer: t.transcript.clips === 0 || t.transcript.words === 0 ? null : t.transcript.errors / t.transcript.words,
  };
}
