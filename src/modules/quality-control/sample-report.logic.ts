/**
 * The quality report of samples (issue 29), pure: text spans, time segments and classes, scored against ground truth
 * per annotator (token-level F1 for spans, F1 of IoU-matched segments per class, accuracy for classes) and agreement among annotators (Krippendorff's alpha, nominal): for
 * classes over the overlapped samples (a sample is a unit, its annotators the coders), for spans per sample and over
 * every overlapped sample (a token is a unit, its label or "O" the value). The figures come from
 * label-agreement.logic.ts; this adds them up over samples and annotators. Multi-label classes, numeric targets, LLM
 * ratings/preferences and transcripts are scored as sample-value-scores.logic.ts defines, and their agreement among
 * annotators (per project, and each annotator's with the others, as for classes) as sample-value-agreement.logic.ts does.
 */
import { krippendorff, krippendorffAlpha, nominal, spanAlpha, spanTokenCounts, tokenize, tokenLabels, type TextSpan } from './label-agreement.logic.js';
import { csvCell, reviewRates } from './quality-report.logic.js';
import { addSegmentCounts, segmentCounts, type SegmentClassCounts, type TimeSegment } from './segment-scores.logic.js';
import { f1Of, type Counts } from './shape-scores.logic.js';
import { emptyTally, tallyValues, valueFigures, type SampleValue, type ValueFigures } from './sample-value-scores.logic.js';
import { valueAgreement, type ValueAgreement, type ValueAnswer } from './sample-value-agreement.logic.js';

/** One annotator's answer on a sample: its class (null: none given) and, on a text, its spans (null: none given). */
export interface SampleVersion {
  sample_id: number;
  user_id: number;
  label: string | null;
  spans: TextSpan[] | null;
  /** On audio and video, the time segments (null or absent: none given). */
  segments?: TimeSegment[] | null;
  /** Every class of a multi-label answer (null or absent: `label` alone). */
  labels?: string[] | null;
  /** Regression target, transcript or LLM rating/preference (null or absent: none given). */
  value?: SampleValue;
}

/** A ground-truth sample: the reviewed class and spans, and the text the spans are of (null for other modalities). */
export interface SampleTruth {
  label: string | null;
  spans: TextSpan[] | null;
  text: string | null;
  /** The reviewed time segments of an audio or video clip (null or absent: not a clip, or none). */
  segments?: TimeSegment[] | null;
  /** Every class of a multi-label sample (null or absent: `label` alone). */
  labels?: string[] | null;
  /** The reviewed value (null or absent: none). */
  value?: SampleValue;
}

export interface SampleAnnotatorScores extends ValueFigures {
  user_id: number;
  /** Ground-truth samples the annotator answered. */
  samples: number;
  /** Share of their class answers equal to the truth's (samples where both give exactly one class); null when none. */
  class_accuracy: number | null;
  /** Token-level F1 of their spans, micro over the ground-truth texts where either side has spans given; null when none. */
  span_f1: number | null;
  span_counts: Counts;
  /** F1 of their time segments (matched per class by IoU ≥ 0.5), micro over the ground-truth clips where either side has segments; null when none. */
  segment_f1: number | null;
  segment_counts: Counts;
  segment_per_class: SegmentClassCounts[];
  /** Task reviews decided on their answers, and the rejection and rework rates as images' (quality-report.logic reviewRates). */
  reviews_decided: number;
  rejection_rate: number | null;
  rework_rate: number | null;
}

/** An annotator's agreement with the others on the overlapped samples (sample-value-agreement.logic.ts); null: none. */
export interface SampleAnnotatorAgreement extends ValueAgreement {
  /** Their alpha (nominal) of classes against the others'. */
  class_alpha: number | null;
}

/** Task-review outcomes of one annotator's sample answers. */
export interface SampleReviewCounts { user_id: number; accepted: number; changes: number }

export interface SampleAgreementRow {
  sample_id: number;
  annotators: number[];
  /** Whether every annotator who gave a class gave the same one (null: fewer than two classes given). */
  class_unanimous: boolean | null;
  /** Krippendorff's alpha of the annotators' token labels on this text (null: not a text, or under two span answers). */
  span_alpha: number | null;
}

export interface SampleReport extends ValueAgreement {
  annotators: (SampleAnnotatorScores & SampleAnnotatorAgreement)[];
  samples: SampleAgreementRow[];
  /** Alpha of the classes over every overlapped sample that is not ground truth; null when no sample has two classes. */
  class_alpha: number | null;
  /** Alpha of the token labels over every token of the overlapped texts; null when none has two span answers. */
  span_alpha: number | null;
}

function byKey<T>(items: readonly T[], key: (item: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const item of items) {
    const list = out.get(key(item));
    if (list) list.push(item);
    else out.set(key(item), [item]);
  }
  return out;
}

/**
 * Every annotator's scores on the ground-truth samples they answered and their review rates. An annotator is someone
 * with a submitted answer or a decided review (all their answers may be back with them for changes).
 */
export function sampleAnnotatorScores(versions: readonly SampleVersion[], truth: ReadonlyMap<number, SampleTruth>, reviews: readonly SampleReviewCounts[] = []): SampleAnnotatorScores[] {
  const byUser = byKey(versions, (v) => v.user_id);
  const reviewsOf = new Map(reviews.map((r) => [r.user_id, r]));
  const users = [...new Set([...byUser.keys(), ...reviews.filter((r) => r.accepted + r.changes > 0).map((r) => r.user_id)])].sort((a, b) => a - b);
  return users.map((user) => {
    const mine = byUser.get(user) ?? [];
    const r = reviewsOf.get(user);
    const rates = reviewRates(r && { user_id: user, submitted: 0, approved: 0, rejected: 0, changes: 0, task_accepted: r.accepted, task_changes: r.changes });
    const scored = mine.filter((v) => truth.has(v.sample_id));
    let both = 0;
    let equal = 0;
    const counts: Counts = { tp: 0, fp: 0, fn: 0 };
    let spanSamples = 0;
    const clips: SegmentClassCounts[][] = [];
    const values = emptyTally();
    for (const v of scored) {
      const t = truth.get(v.sample_id)!;
      const [tLabels, vLabels] = [classesOf(t), classesOf(v)];
      tallyValues(values, { labels: tLabels, value: t.value ?? null }, { labels: vLabels, value: v.value ?? null });
      if (tLabels.length === 1 && vLabels.length === 1) {
        both++;
        if (t.label === v.label) equal++;
      }
      if (t.text !== null && (t.spans !== null || v.spans !== null)) {
        spanSamples++;
        const c = spanTokenCounts(t.text, t.spans ?? [], v.spans ?? []);
        counts.tp += c.tp;
        counts.fp += c.fp;
        counts.fn += c.fn;
      }
      if (t.text === null && (t.segments || v.segments)) clips.push(segmentCounts(t.segments ?? [], v.segments ?? []));
    }
    const segmentPerClass = addSegmentCounts(clips);
    const segments = segmentPerClass.reduce((sum, c) => ({ tp: sum.tp + c.tp, fp: sum.fp + c.fp, fn: sum.fn + c.fn }), { tp: 0, fp: 0, fn: 0 });
    return {
      user_id: user,
      samples: scored.length,
      class_accuracy: both === 0 ? null : equal / both,
      span_f1: spanSamples === 0 ? null : f1Of(counts),
      span_counts: counts,
      segment_f1: clips.length === 0 ? null : f1Of(segments),
      segment_counts: segments,
      segment_per_class: segmentPerClass,
      ...valueFigures(values),
      reviews_decided: rates.decided,
      rejection_rate: rates.rejection,
      rework_rate: rates.rework,
    };
  });
}

/** Every class given: the multi-label list, else the one class, else none. */
const classesOf = (x: { label: string | null; labels?: string[] | null }): string[] => x.labels ?? (x.label === null ? [] : [x.label]);

/**
 * Agreement of the samples (not ground truth) that two or more annotators answered; `texts` gives each text sample's
 * text (samples of other modalities have none: only their classes count).
 */
export function sampleReport(versions: readonly SampleVersion[], truth: ReadonlyMap<number, SampleTruth>, texts: ReadonlyMap<number, string>, reviews: readonly SampleReviewCounts[] = []): SampleReport {
  const rows: SampleAgreementRow[] = [];
  const classUnits: [number, string | null][][] = [];
  const valueUnits: ValueAnswer[][] = [];
  const tokenUnits: (string | null)[][] = [];
  for (const [sampleId, list] of [...byKey(versions, (v) => v.sample_id)].sort((a, b) => a[0] - b[0])) {
    if (truth.has(sampleId) || list.length < 2) continue;
    const ordered = [...list].sort((a, b) => a.user_id - b.user_id);
    const classes = ordered.map((v) => v.label);
    classUnits.push(ordered.map((v) => [v.user_id, v.label]));
    valueUnits.push(ordered.map((v) => ({ user_id: v.user_id, labels: classesOf(v), value: v.value ?? null })));
    const given = classes.filter((c) => c !== null);
    const text = texts.get(sampleId);
    const spans = ordered.map((v) => v.spans);
    if (text !== undefined) {
      const tokens = tokenize(text);
      const labels = spans.map((s) => (s === null ? null : tokenLabels(tokens, s)));
      for (let t = 0; t < tokens.length; t++) tokenUnits.push(labels.map((l) => (l === null ? null : (l[t] ?? 'O'))));
    }
    rows.push({
      sample_id: sampleId,
      annotators: ordered.map((v) => v.user_id),
      class_unanimous: given.length < 2 ? null : given.every((c) => c === given[0]),
      span_alpha: text === undefined || spans.filter((s) => s !== null).length < 2 ? null : spanAlpha(text, spans),
    });
  }
  const classAlpha = krippendorff(classUnits, nominal);
  const values = valueAgreement(valueUnits);
  return {
    annotators: sampleAnnotatorScores(versions, truth, reviews).map((a) => ({ ...a, class_alpha: classAlpha.coders.get(a.user_id) ?? null, ...(values.annotators.get(a.user_id) ?? valueAgreement([]).project) })),
    samples: rows,
    class_alpha: classAlpha.alpha,
    span_alpha: krippendorffAlpha(tokenUnits),
    ...values.project,
  };
}

const AGREEMENT = ['class_alpha', 'label_set_alpha', 'value_alpha', 'rating_alpha', 'preference_alpha', 'transcript_agreement'] as const;
const CSV_COLUMNS = ['user_id', 'email', 'samples', 'class_accuracy', 'span_f1', 'span_tp', 'span_fp', 'span_fn', 'segment_f1', 'segment_tp', 'segment_fp', 'segment_fn',
  'label_jaccard', 'value_mae', 'preference_accuracy', 'rating_mae', 'transcript_wer', 'reviews_decided', 'rejection_rate', 'rework_rate', ...AGREEMENT] as const;

/** The annotators' scores on samples as CSV (as analyticsCsv for images): a header row, one row per annotator. */
export function sampleScoresCsv(rows: readonly (SampleAnnotatorScores & SampleAnnotatorAgreement & { email: string })[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    lines.push([r.user_id, r.email, r.samples, r.class_accuracy, r.span_f1, r.span_counts.tp, r.span_counts.fp, r.span_counts.fn,
      r.segment_f1, r.segment_counts.tp, r.segment_counts.fp, r.segment_counts.fn,
      r.label_jaccard, r.value_mae, r.preference_accuracy, r.rating_mae, r.transcript_wer, r.reviews_decided, r.rejection_rate, r.rework_rate, ...AGREEMENT.map((c) => r[c])].map(csvCell).join(','));
  }
  return `${lines.join('\n')}\n`;
}
