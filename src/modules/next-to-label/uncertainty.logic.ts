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
 * The embedding (for k-centre diversity): the detector's ONNX file exposes no feature map, so the model's own view
 * of the image stands in for one: per class, the highest score in each cell of a 3 × 3 grid over the image plus the
 * image-wide highest (10 × classes values); a classifier's is its probability vector. Images the model sees the
 * same way are close; it costs nothing beyond the run the uncertainty needs.
 */
export const UNCERTAINTY_MEASURES = ['least_confidence', 'margin', 'entropy'] as const;
export type UncertaintyMeasure = (typeof UNCERTAINTY_MEASURES)[number];
export const AGGREGATIONS = ['max', 'sum', 'mean'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/** What one model run says about an image: its uncertainty by each measure and aggregation, and its embedding. */
export interface ImagePrediction {
  uncertainty: Record<UncertaintyMeasure, Record<Aggregation, number>>;
  embedding: Float32Array;
}

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

/** A classifier sees the image as one distribution: every aggregation of one value is that value. */
export function classifierPrediction(probabilities: readonly number[]): ImagePrediction {
  const each = measures(probabilities);
  const uncertainty = Object.fromEntries(UNCERTAINTY_MEASURES.map((m) => [m, { max: each[m], sum: each[m], mean: each[m] }]));
  return { uncertainty: uncertainty as ImagePrediction['uncertainty'], embedding: Float32Array.from(probabilities) };
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
  const found = detections.length > 0;
  const uncertainty = Object.fromEntries(UNCERTAINTY_MEASURES.map((m) => [m, found ? { max: 0, sum: 0, mean: 0 } : { max: 1, sum: 1, mean: 1 }])) as ImagePrediction['uncertainty'];
  const embedding = new Float32Array((GRID * GRID + 1) * classes);
  for (const d of detections) {
    const p = detectionDistribution(d, classes);
    const each = measures(p);
    for (const m of UNCERTAINTY_MEASURES) {
      uncertainty[m].max = Math.max(uncertainty[m].max, each[m]);
      uncertainty[m].sum += each[m];
      uncertainty[m].mean += each[m] / detections.length;
    }
    const gx = Math.min(GRID - 1, Math.max(0, Math.floor(((d.box.x + d.box.width / 2) / size.width) * GRID)));
    const gy = Math.min(GRID - 1, Math.max(0, Math.floor(((d.box.y + d.box.height / 2) / size.height) * GRID)));
    const cell = (gy * GRID + gx) * classes;
    const global = GRID * GRID * classes;
    for (let k = 0; k < classes; k++) {
      embedding[cell + k] = Math.max(embedding[cell + k], p[k]);
      embedding[global + k] = Math.max(embedding[global + k], p[k]);
    }
  }
  return { uncertainty, embedding };
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
