/**
 * How unsure a model is about an image, and where the image sits in the model's view of the world, from one run.
 *
 * Classifiers: the three classic measures over the class probabilities p (Settles 2009): least confidence
 * 1 − max p, margin 1 − (p₁ − p₂) between the two most likely classes, entropy −Σ p log p / log K.
 *
 * Detectors (the convention of Brust et al. 2018 and Haussmann et al. 2020 for detection active learning): each
 * detection down to a low confidence floor has a distribution over the classes and background: the detection's
 * confidence c shared among the classes in proportion to their scores, and 1 − c for "no object here", so a box
 * at 0.5 is as unsure as two classes tied. The measure is taken per detection and aggregated over the image
 * (Brust et al.'s three): `sum` (uncertain objects add up: crowded, unsure images first; the route's default, as
 * it labelled more objects and beat `max` in bench/active-learning.ts), `max` (its least certain detection) or `mean`. An image on which the model finds nothing above the floor scores 1 (sum: 1 plus
 * nothing): in a project whose images hold objects, a model that sees none has failed there, and that image
 * teaches it the most.
 *
 * Class balance (`balance=classes`): each detection's measure is weighted by how rare its predicted class is among
 * the boxes already labelled, w_k = √(((N + K) / K) / (n_k + 1)) for n_k of the N labelled boxes in class k of K
 * (1 when the classes are even; the square root of inverse frequency, as class-balanced losses temper it), so an
 * unsure bus counts more than an unsure car when buses are scarce: a detector's mAP averages its classes, and
 * crowded frames of the common classes would otherwise fill the batch.
 *
 * The embedding (for k-centre diversity): the detector's ONNX file exposes no feature map, so the model's own view
 * of the image stands in for one: per class, the highest score in each cell of a 3 × 3 grid over the image plus the
 * image-wide highest (10 × classes values); a classifier's is its probability vector. Images the model sees the
 * same way are close; it costs nothing beyond the run the uncertainty needs.
 */
export const UNCERTAINTY_MEASURES = ['least_confidence', 'margin', 'entropy'] as const;
export type UncertaintyMeasure = (typeof UNCERTAINTY_MEASURES)[number];
export const AGGREGATIONS = ['max', 'sum', 'mean'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/**
 * What one model run says about an image: each detection's predicted class and its measures (packed: a cached
 * entry is 14 bytes a detection beside the embedding), and its embedding. A classifier's one distribution counts as
 * one detection; a detector that found nothing has none.
 */
export interface ImagePrediction {
  classIds: Uint16Array;
  uncertainty: Record<UncertaintyMeasure, Float32Array>;
  embedding: Float32Array;
}

const packed = (rows: { classId: number; uncertainty: Record<UncertaintyMeasure, number> }[], embedding: Float32Array): ImagePrediction => ({
  classIds: Uint16Array.from(rows, (r) => r.classId),
  uncertainty: Object.fromEntries(UNCERTAINTY_MEASURES.map((m) => [m, Float32Array.from(rows, (r) => r.uncertainty[m])])) as ImagePrediction['uncertainty'],
  embedding,
});

export interface ScoredDetection {
  confidence: number;
  /** Per-class scores (any scale; only their proportions are used). */
  classScores?: readonly number[];
  classId: number;
  box: { x: number; y: number; width: number; height: number };
}

const GRID = 3;

/** Least confidence, margin and entropy of one probability distribution (entropy normalised to [0, 1]). */
export function measures(p: readonly number[]): Record<UncertaintyMeasure, number> {
  const sorted = [...p].sort((a, b) => b - a);
  const entropy = p.reduce((sum, q) => (q > 0 ? sum - q * Math.log(q) : sum), 0);
  return {
    least_confidence: clamp01(1 - (sorted[0] ?? 0)),
    margin: clamp01(1 - ((sorted[0] ?? 0) - (sorted[1] ?? 0))),
    entropy: p.length > 1 ? clamp01(entropy / Math.log(p.length)) : 0,
  };
}

/** A classifier sees the image as one distribution. */
export function classifierPrediction(probabilities: readonly number[]): ImagePrediction {
  const classId = probabilities.reduce((best, p, k) => (p > probabilities[best] ? k : best), 0);
  return packed([{ classId, uncertainty: measures(probabilities) }], Float32Array.from(probabilities));
}

/** The image's uncertainty by one measure: its detections' measures (times their class's weight) aggregated; 1 when nothing was found. */
export function imageUncertainty(prediction: ImagePrediction, measure: UncertaintyMeasure, aggregate: Aggregation, weights?: readonly number[]): number {
  const values = prediction.uncertainty[measure];
  if (values.length === 0) return 1;
  const each = Array.from(values, (u, i) => u * (weights?.[prediction.classIds[i]] ?? 1));
  if (aggregate === 'max') return Math.max(...each);
  const sum = each.reduce((a, b) => a + b, 0);
  return aggregate === 'sum' ? sum : sum / each.length;
}

/** Each class's weight from the labelled boxes per class (see the module's note): rare classes above 1, common ones below. */
export function classWeights(counts: readonly number[]): number[] {
  const total = counts.reduce((a, b) => a + b, 0);
  return counts.map((n) => Math.sqrt((total + counts.length) / counts.length / (n + 1)));
}

/** The detection's distribution over the `classCount` classes and background (last). */
export function detectionDistribution(d: ScoredDetection, classCount: number): number[] {
  const c = clamp01(d.confidence);
  const scores = d.classScores ?? [];
  const total = scores.reduce((sum, s) => sum + Math.max(0, s), 0);
  const p = new Array<number>(classCount + 1).fill(0);
  if (total > 0) for (let k = 0; k < classCount; k++) p[k] = (c * Math.max(0, scores[k] ?? 0)) / total;
  else p[Math.min(d.classId, classCount - 1)] = c;
  p[classCount] = 1 - c;
  return p;
}

export function detectorPrediction(detections: readonly ScoredDetection[], size: { width: number; height: number }, classCount: number): ImagePrediction {
  // The model's class count keeps every image's embedding in one layout; a model without names falls back to what it emits.
  const classes = classCount > 0 ? classCount : Math.max(1, ...detections.map((d) => Math.max(d.classId + 1, d.classScores?.length ?? 0)));
  const embedding = new Float32Array((GRID * GRID + 1) * classes);
  const rows = detections.map((d) => {
    const p = detectionDistribution(d, classes);
    const gx = Math.min(GRID - 1, Math.max(0, Math.floor(((d.box.x + d.box.width / 2) / size.width) * GRID)));
    const gy = Math.min(GRID - 1, Math.max(0, Math.floor(((d.box.y + d.box.height / 2) / size.height) * GRID)));
    const cell = (gy * GRID + gx) * classes;
    const global = GRID * GRID * classes;
    for (let k = 0; k < classes; k++) {
      embedding[cell + k] = Math.max(embedding[cell + k], p[k]);
      embedding[global + k] = Math.max(embedding[global + k], p[k]);
    }
    return { classId: Math.min(d.classId, classes - 1), uncertainty: measures(p) };
  });
  return packed(rows, embedding);
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
