/**
 * The team quality report (issue 29), pure: from ground truth, each annotator's submitted versions and their review
 * counts to per-annotator figures, per-image agreement and the consensus weights. The service reads the rows; the
 * benchmark (bench/quality-report.ts) runs the same functions on generated data.
 */
import { imageAgreement } from './consensus.logic.js';
import { addScores, DEFAULT_MIN_IOU, scoreShapes, type Shape, type ShapeScore } from './shape-scores.logic.js';

export interface SubmittedVersion {
  image_id: number;
  user_id: number;
  shapes: Shape[];
  active_ms: number;
  submitted_at: string;
}

export interface ReviewCounts {
  user_id: number;
  submitted: number;
  approved: number;
  rejected: number;
  changes: number;
  /** Task reviews (of quality-control task submissions) accepted. */
  task_accepted?: number;
  /** Task reviews that requested changes: a rejection of the version that also sends it back for rework. */
  task_changes?: number;
}

/**
 * Decided reviews of a user's work and the two rates, one definition for image reviews and task reviews: rejection =
 * (image reviews rejected + task reviews requesting changes) / decided; rework = (image reviews requesting changes +
 * task reviews requesting changes) / decided. A task review has one negative outcome, which both refuses the
 * version and sends it back, so it counts in both.
 */
export function reviewRates(r: ReviewCounts | undefined): { decided: number; rejection: number | null; rework: number | null } {
  if (!r) return { decided: 0, rejection: null, rework: null };
  const taskChanges = r.task_changes ?? 0;
  const decided = r.approved + r.rejected + r.changes + (r.task_accepted ?? 0) + taskChanges;
  return decided > 0 ? { decided, rejection: (r.rejected + taskChanges) / decided, rework: (r.changes + taskChanges) / decided } : { decided, rejection: null, rework: null };
}

export interface GroundTruthFigures {
  images: number;
  precision: number | null;
  recall: number | null;
  f1: number | null;
  mean_iou: number | null;
  class_accuracy: number | null;
}

export interface AnnotatorFigures {
  user_id: number;
  tasks_submitted: number;
  active_seconds: number;
  seconds_per_image: number | null;
  objects: number;
  objects_per_hour: number | null;
  reviews_decided: number;
  rejection_rate: number | null;
  rework_rate: number | null;
  ground_truth: GroundTruthFigures;
  per_class: { class_id: number; tp: number; fp: number; fn: number; f1: number }[];
  /** Mean F1 against every other annotator's version of the same (non-ground-truth) images; null when none. */
  agreement: number | null;
  /** Ground-truth F1 by day (UTC) of submission. */
  over_time: { day: string; images: number; f1: number }[];
}

export interface ImageAgreementRow {
  image_id: number;
  annotators: number[];
  f1: number;
  mean_iou: number | null;
  per_class: { class_id: number; f1: number }[];
  below_threshold: boolean;
}

const gtFigures = (s: ShapeScore | null, images: number): GroundTruthFigures =>
  s === null
    ? { images: 0, precision: null, recall: null, f1: null, mean_iou: null, class_accuracy: null }
    : { images, precision: s.precision, recall: s.recall, f1: s.f1, mean_iou: s.mean_iou, class_accuracy: s.class_accuracy };

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/**
 * Every annotator's figures. `groundTruth` maps a ground-truth image to its reviewed shapes; versions of those images
 * are scored against them, versions of other images against each other (agreement).
 */
export function annotatorFigures(
  versions: readonly SubmittedVersion[],
  groundTruth: ReadonlyMap<number, Shape[]>,
  reviews: readonly ReviewCounts[],
  /** The per-user sums of pairwise F1 on overlapped images, when already computed (teamReport). */
  pairAgreement?: ReadonlyMap<number, { sum: number; n: number }>,
): AnnotatorFigures[] {
  const byUser = groupBy(versions, (v) => v.user_id);
  const reviewsOf = new Map(reviews.map((r) => [r.user_id, r]));
  const agreementSum = pairAgreement ?? overlapPairs(versions, groundTruth).perUser;
  // An annotator is someone who labelled: a submitted task, or images of theirs that a review decided. Reviews still
  // pending name no one's work yet.
  const users = new Set<number>([...byUser.keys(), ...reviews.filter((r) => reviewRates(r).decided > 0).map((r) => r.user_id)]);
  return [...users].sort((a, b) => a - b).map((user) => {
    const mine = byUser.get(user) ?? [];
    const activeMs = mine.reduce((s, v) => s + v.active_ms, 0);
    const objects = mine.reduce((s, v) => s + v.shapes.length, 0);
    const scored = mine.filter((v) => groundTruth.has(v.image_id)).map((v) => ({ v, score: scoreShapes(groundTruth.get(v.image_id)!, v.shapes) }));
    const total = scored.length > 0 ? addScores(scored.map((s) => s.score)) : null;
    const r = reviewsOf.get(user);
    const rates = reviewRates(r);
    const agreement = agreementSum.get(user);
    const days = groupBy(scored, (s) => s.v.submitted_at.slice(0, 10));
    return {
      user_id: user,
      tasks_submitted: mine.length,
      active_seconds: Math.round(activeMs / 1000),
      seconds_per_image: mine.length > 0 ? activeMs / 1000 / mine.length : null,
      objects,
      objects_per_hour: activeMs > 0 ? objects / (activeMs / 3_600_000) : null,
      reviews_decided: rates.decided,
      rejection_rate: rates.rejection,
      rework_rate: rates.rework,
      ground_truth: gtFigures(total, scored.length),
      per_class: (total?.per_class ?? []).map((c) => ({ class_id: c.class_id, tp: c.tp, fp: c.fp, fn: c.fn, f1: c.f1 })),
      agreement: agreement ? agreement.sum / agreement.n : null,
      over_time: [...days.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([day, list]) => ({ day, images: list.length, f1: addScores(list.map((s) => s.score)).f1 })),
    };
  });
}

/**
 * Every pair of versions of each overlapped image (not ground truth, two versions or more) scored once: the image's
 * agreement (imageAgreement: mean pairwise F1, mean IoU over the pairs' matches, F1 per class averaged over the pairs
 * that have the class) and each annotator's sum of pairwise F1.
 */
export function overlapPairs(versions: readonly SubmittedVersion[], groundTruth: ReadonlySet<number> | ReadonlyMap<number, unknown>) {
  const perUser = new Map<number, { sum: number; n: number }>();
  const images: Omit<ImageAgreementRow, 'below_threshold'>[] = [];
  for (const [imageId, list] of groupBy(versions, (v) => v.image_id)) {
    if (groundTruth.has(imageId) || list.length < 2) continue;
    const agreement = imageAgreement(list, DEFAULT_MIN_IOU, (i, j, f1) => {
      for (const user of [list[i].user_id, list[j].user_id]) {
        const e = perUser.get(user) ?? { sum: 0, n: 0 };
        e.sum += f1;
        e.n++;
        perUser.set(user, e);
      }
    });
    images.push({
      image_id: imageId,
      annotators: list.map((v) => v.user_id).sort((x, y) => x - y),
      f1: agreement.f1,
      mean_iou: agreement.mean_iou,
      per_class: agreement.per_class,
    });
  }
  images.sort((a, b) => a.image_id - b.image_id);
  return { perUser, images };
}

/** Agreement of every image (not ground truth) that at least two annotators submitted. */
export function imageAgreements(versions: readonly SubmittedVersion[], groundTruth: ReadonlySet<number> | ReadonlyMap<number, unknown>, threshold: number): ImageAgreementRow[] {
  return withThreshold(overlapPairs(versions, groundTruth).images, threshold);
}

const withThreshold = (images: Omit<ImageAgreementRow, 'below_threshold'>[], threshold: number): ImageAgreementRow[] =>
  images.map((r) => ({ ...r, below_threshold: r.f1 < threshold }));

/** The whole report, every pair of versions scored once: annotators' figures and images' agreement. */
export function teamReport(versions: readonly SubmittedVersion[], groundTruth: ReadonlyMap<number, Shape[]>, reviews: readonly ReviewCounts[], threshold: number) {
  const pairs = overlapPairs(versions, groundTruth);
  return { annotators: annotatorFigures(versions, groundTruth, reviews, pairs.perUser), images: withThreshold(pairs.images, threshold) };
}

/**
 * Consensus weights: an annotator's ground-truth F1; one without ground-truth images gets the mean of those who have
 * one (1 when nobody has).
 */
export function consensusWeights(figures: readonly AnnotatorFigures[]): Map<number, number> {
  const scored = figures.filter((f) => f.ground_truth.f1 !== null);
  const mean = scored.length > 0 ? scored.reduce((s, f) => s + f.ground_truth.f1!, 0) / scored.length : 1;
  return new Map(figures.map((f) => [f.user_id, f.ground_truth.f1 ?? mean]));
}

const CSV_COLUMNS = [
  'user_id', 'email', 'tasks_submitted', 'active_seconds', 'seconds_per_image', 'objects', 'objects_per_hour', 'reviews_decided',
  'rejection_rate', 'rework_rate', 'gt_images', 'gt_precision', 'gt_recall', 'gt_f1', 'gt_mean_iou', 'gt_class_accuracy', 'agreement',
] as const;

/** One CSV cell: empty for null, numbers to 6 decimals, quoted when it holds a comma, quote or line break. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? String(Number.isInteger(value) ? value : Number(value.toFixed(6))) : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The analytics as CSV: a header row, one row per annotator. */
export function analyticsCsv(rows: readonly (AnnotatorFigures & { email: string })[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    const g = r.ground_truth;
    lines.push([r.user_id, r.email, r.tasks_submitted, r.active_seconds, r.seconds_per_image, r.objects, r.objects_per_hour, r.reviews_decided,
      r.rejection_rate, r.rework_rate, g.images, g.precision, g.recall, g.f1, g.mean_iou, g.class_accuracy, r.agreement].map(csvCell).join(','));
  }
  return `${lines.join('\n')}\n`;
}
