/**
 * Agreement among annotators on what a sample holds besides one class and spans (issue 29), per project and per
 * annotator (their agreement with the others), over the samples two or more of them answered. Pure. Alphas come from
 * the one implementation in label-agreement.logic.ts with the difference function each kind of value needs:
 *
 * - Multi-label classes: alpha with the Jaccard distance 1 − |A ∩ B| / |A ∪ B| of the class sets. Chosen over MASI
 *   (Passonneau 2006, the Jaccard distance times a weight for subset / overlap / disjoint) because it is the index the
 *   ground-truth score (label_jaccard) already uses, so agreement and accuracy read on one scale, and it is a true
 *   metric without MASI's hand-set weights. Reported only where some answer holds two or more classes: otherwise the
 *   sets are single classes and this is class_alpha again.
 * - Tabular numeric targets and LLM ratings: alpha at the interval level (δ = (a − b)²).
 * - LLM preference (chosen / rejected / tie): alpha, nominal; a tie is a third value.
 * - Transcripts: the mean over pairs of annotators on a clip of 1 − WER, made symmetric by dividing the word edit
 *   distance by the longer transcript's word count (plain WER divides by the reference's, and neither is one here):
 *   1 when identical, 0 when no word lines up; two empty transcripts agree fully.
 *
 * A figure is null where no sample has two answers of its kind (a single annotator, or values missing).
 */
import { interval, krippendorff, nominal, type CodedUnit, type Distance } from './label-agreement.logic.js';
import { labelJaccard, transcriptWords, wordErrors, type LlmValue, type SampleValue } from './sample-value-scores.logic.js';

/** One annotator's answer on an overlapped sample: its class set (empty: none given) and value. */
export interface ValueAnswer {
  user_id: number;
  labels: readonly string[];
  value: SampleValue;
}

export interface ValueAgreement {
  /** Alpha of the multi-label class sets (Jaccard distance); null when no answer holds two classes. */
  label_set_alpha: number | null;
  /** Alpha (interval) of the tabular numeric targets. */
  value_alpha: number | null;
  /** Alpha (interval) of the LLM ratings. */
  rating_alpha: number | null;
  /** Alpha (nominal) of the LLM preferences. */
  preference_alpha: number | null;
  /** Mean over pairs of 1 − symmetric WER of the transcripts. */
  transcript_agreement: number | null;
}

export const jaccardDistance: Distance<readonly string[]> = (a, b) => 1 - labelJaccard(a, b);

/** 1 − the word edit distance over the longer transcript's word count (1 when both have no word). */
export function transcriptAgreement(a: string, b: string): number {
  const longest = Math.max(transcriptWords(a).length, transcriptWords(b).length);
  return longest === 0 ? 1 : 1 - wordErrors(a, b).errors / longest;
}

const llm = (v: SampleValue): LlmValue | null => (typeof v === 'object' && v !== null ? v : null);

/** Agreement per project and per annotator; `samples` holds each overlapped sample's answers. */
export function valueAgreement(samples: readonly (readonly ValueAnswer[])[]): { project: ValueAgreement; annotators: Map<number, ValueAgreement> } {
  const units = <T>(pick: (a: ValueAnswer) => T | null): CodedUnit<T>[] => samples.map((answers) => answers.map((a) => [a.user_id, pick(a)] as const));
  const multiLabel = samples.some((answers) => answers.some((a) => a.labels.length > 1));
  const sets = krippendorff(units((a) => (a.labels.length === 0 ? null : [...new Set(a.labels)].sort())), jaccardDistance, (s) => s.join('\u0000'));
  const numbers = krippendorff(units((a) => (typeof a.value === 'number' ? a.value : null)), interval);
  const ratings = krippendorff(units((a) => llm(a.value)?.rating ?? null), interval);
  const preferences = krippendorff(units((a) => llm(a.value)?.preference ?? null), nominal);
  const pairs = new Map<number, number[]>();
  const all: number[] = [];
  for (const answers of samples) {
    const clips = answers.filter((a) => typeof a.value === 'string');
    for (let i = 0; i < clips.length; i++) {
      for (let j = i + 1; j < clips.length; j++) {
        const agreement = transcriptAgreement(clips[i].value as string, clips[j].value as string);
        all.push(agreement);
        for (const user of [clips[i].user_id, clips[j].user_id]) pairs.set(user, [...(pairs.get(user) ?? []), agreement]);
      }
    }
  }
  const mean = (xs: readonly number[] | undefined) => (xs === undefined || xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length);
  const figures = (pick: (r: ReturnType<typeof krippendorff>) => number | null, transcripts: number[] | undefined): ValueAgreement => ({
    label_set_alpha: multiLabel ? pick(sets) : null,
    value_alpha: pick(numbers),
    rating_alpha: pick(ratings),
    preference_alpha: pick(preferences),
    transcript_agreement: mean(transcripts),
  });
  const users = new Set(samples.flatMap((answers) => answers.map((a) => a.user_id)));
  return {
    project: figures((r) => r.alpha, all),
    annotators: new Map([...users].map((user) => [user, figures((r) => r.coders.get(user) ?? null, pairs.get(user))])),
  };
}
