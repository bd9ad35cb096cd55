/**
 * Shape scoring of one annotator's objects against a reference (ground truth, or another annotator) on one image
 * (issue 29). Pure: shapes in, figures out.
 *
 * Matching is optimal one-to-one (the Hungarian method, src/lib/assignment.ts), not greedy: among the pairs whose
 * IoU reaches `minIou` (0.5 by default), the set of pairs of largest total IoU. It is class-agnostic, so an object drawn
 * in the right place with the wrong class is a matched pair that counts against class accuracy (as CVAT's quality
 * reports do). Ties (equal IoU) go to the pair whose classes agree, then to the lower indices.
 *
 * Per class c, with TP_c the matched pairs whose both classes are c:
 *   FP_c = objects of the annotator of class c not in such a pair, FN_c = reference objects of class c not in one;
 *   precision = TP/(TP+FP), recall = TP/(TP+FN) (null when the denominator is 0),
 *   F1 = 2TP/(2TP+FP+FN), 1 when both sides have nothing (an empty image labelled empty is right).
 * Overall figures are micro sums over the classes. Mean IoU is over every matched pair (null when none); class
 * accuracy is the share of matched pairs whose classes agree (null when none).
 *
 * IoU: area shapes (bbox, rotated bbox, polygon with parts/holes, ellipse, mask) by src/imaging/shape-metrics.ts,
 * across types too (a box against a polygon); image-level `classification` shapes match one of the same class with
 * IoU 1; other shapes (keypoints, polylines, points) by the IoU of their enclosing boxes.
 */
import { geometryBox } from '../../imaging/geometry.js';
import { boxIou, mixedShapeIou } from '../../imaging/shape-metrics.js';
import { assign, FORBIDDEN } from '../../lib/assignment.js';

export const DEFAULT_MIN_IOU = 0.5;

export interface Shape {
  class_id: number;
  annotation_type: string;
  geometry: object;
}

export interface Counts {
  tp: number;
  fp: number;
  fn: number;
}

export interface ClassScore extends Counts {
  class_id: number;
  precision: number | null;
  recall: number | null;
  f1: number;
}

export interface ShapeScore extends ClassScore {
  /** Matched pairs (any class). */
  matched: number;
  mean_iou: number | null;
  class_accuracy: number | null;
  /** Sum of the matched pairs' IoU and how many agreed in class: what aggregates over images add up. */
  iou_sum: number;
  class_agreed: number;
  per_class: ClassScore[];
}

export interface Pair {
  /** Index into the reference's shapes. */
  ref: number;
  /** Index into the annotator's shapes. */
  ann: number;
  iou: number;
}

/** IoU of two shapes by the rules above (0 when they cannot overlap). */
export function iouOf(a: Shape, b: Shape): number {
  if (a.annotation_type === 'bbox' && b.annotation_type === 'bbox') {
    const ga = a.geometry as { x: number; y: number; width: number; height: number; rotation?: number };
    const gb = b.geometry as { x: number; y: number; width: number; height: number; rotation?: number };
    if (!ga.rotation && !gb.rotation) {
      // The common case, inline: two upright boxes.
      const ix = Math.min(ga.x + ga.width, gb.x + gb.width) - Math.max(ga.x, gb.x);
      if (ix <= 0) return 0;
      const iy = Math.min(ga.y + ga.height, gb.y + gb.height) - Math.max(ga.y, gb.y);
      if (iy <= 0) return 0;
      const inter = ix * iy;
      const union = ga.width * ga.height + gb.width * gb.height - inter;
      return union <= 0 ? 0 : inter / union;
    }
  }
  if (a.annotation_type === 'classification' || b.annotation_type === 'classification') {
    return a.annotation_type === b.annotation_type && a.class_id === b.class_id ? 1 : 0;
  }
  const direct = mixedShapeIou(a.annotation_type, a.geometry, b.annotation_type, b.geometry);
  if (direct !== null) return direct;
  const boxA = geometryBox(a.annotation_type, a.geometry);
  const boxB = geometryBox(b.annotation_type, b.geometry);
  return boxA && boxB ? boxIou(boxA, boxB) : 0;
}

/** Tie-break in favour of agreeing classes, far below any IoU difference that matters. */
const CLASS_TIE = 1e-9;

/** The optimal one-to-one pairs of IoU ≥ minIou, by reference index. */
export function matchShapes(ref: readonly Shape[], ann: readonly Shape[], minIou = DEFAULT_MIN_IOU): Pair[] {
  const nr = ref.length;
  const na = ann.length;
  if (nr === 0 || na === 0) return [];
  // One flat typed array of the IoUs (the report scores hundreds of thousands of pairs: no array per row).
  const ious = new Float64Array(nr * na);
  // Where no object has two candidates (objects apart from each other: the usual case), the candidates are the
  // optimum; otherwise the Hungarian method decides.
  const candidates: Pair[] = [];
  const refSeen = new Uint8Array(nr);
  const annSeen = new Uint8Array(na);
  let contested = false;
  for (let i = 0; i < nr; i++) {
    const r = ref[i];
    for (let j = 0; j < na; j++) {
      const iou = iouOf(r, ann[j]);
      ious[i * na + j] = iou;
      if (!(iou >= minIou && iou > 0)) continue;
      if (refSeen[i] || annSeen[j]) contested = true;
      refSeen[i] = 1;
      annSeen[j] = 1;
      candidates.push({ ref: i, ann: j, iou });
    }
  }
  if (!contested) return candidates;
  const cost = Array.from({ length: nr }, (_, i) => Array.from({ length: na }, (_, j) => {
    const iou = ious[i * na + j];
    return iou >= minIou && iou > 0 ? 1 - iou - (ref[i].class_id === ann[j].class_id ? CLASS_TIE : 0) : FORBIDDEN;
  }));
  return assign(cost).map(([r, a]) => ({ ref: r, ann: a, iou: ious[r * na + a] }));
}

export function ratio(num: number, den: number): number | null {
  return den === 0 ? null : num / den;
}

/** F1 from counts: 1 when there was nothing to find and nothing was claimed. */
export function f1Of(c: Counts): number {
  const den = 2 * c.tp + c.fp + c.fn;
  return den === 0 ? 1 : (2 * c.tp) / den;
}

export function classScore(class_id: number, c: Counts): ClassScore {
  return { class_id, tp: c.tp, fp: c.fp, fn: c.fn, precision: ratio(c.tp, c.tp + c.fp), recall: ratio(c.tp, c.tp + c.fn), f1: f1Of(c) };
}

/** The raw counts of `ann` against `ref` on one image: per class (in first-seen order) TP, FP, FN; and the matches. */
export interface PairTally {
  classes: number[];
  /** TP, FP, FN of classes[k] at 3k, 3k+1, 3k+2. */
  counts: number[];
  matched: number;
  iouSum: number;
  agreed: number;
}

/**
 * Counts of one image's pair, in small parallel arrays (an image has a handful of classes: a linear search beats a
 * Map, and no per-class object is made — agreement scores every pair of versions of every image this way).
 */
export function tallyShapes(ref: readonly Shape[], ann: readonly Shape[], minIou = DEFAULT_MIN_IOU): PairTally {
  const pairs = matchShapes(ref, ann, minIou);
  const classes: number[] = [];
  const counts: number[] = [];
  const of = (c: number) => {
    let k = classes.indexOf(c);
    if (k < 0) {
      k = classes.length;
      classes.push(c);
      counts.push(0, 0, 0);
    }
    return 3 * k;
  };
  const refHit = new Uint8Array(ref.length);
  const annHit = new Uint8Array(ann.length);
  let iouSum = 0;
  let agreed = 0;
  for (const p of pairs) {
    iouSum += p.iou;
    if (ref[p.ref].class_id === ann[p.ann].class_id) {
      agreed++;
      refHit[p.ref] = 1;
      annHit[p.ann] = 1;
      counts[of(ref[p.ref].class_id)]++;
    }
  }
  for (let i = 0; i < ref.length; i++) if (!refHit[i]) counts[of(ref[i].class_id) + 2]++;
  for (let j = 0; j < ann.length; j++) if (!annHit[j]) counts[of(ann[j].class_id) + 1]++;
  return { classes, counts, matched: pairs.length, iouSum, agreed };
}

/** F1 of a tally's class k (2TP/(2TP+FP+FN), 1 when empty) and over every class. */
export function tallyF1(t: PairTally, k?: number): number {
  if (k !== undefined) return f1Of({ tp: t.counts[3 * k], fp: t.counts[3 * k + 1], fn: t.counts[3 * k + 2] });
  let tp = 0;
  let wrong = 0;
  for (let i = 0; i < t.counts.length; i += 3) {
    tp += t.counts[i];
    wrong += t.counts[i + 1] + t.counts[i + 2];
  }
  return f1Of({ tp, fp: wrong, fn: 0 });
}

/** The figures of `ann` against `ref` on one image. */
export function scoreShapes(ref: readonly Shape[], ann: readonly Shape[], minIou = DEFAULT_MIN_IOU): ShapeScore {
  const t = tallyShapes(ref, ann, minIou);
  const order = t.classes.map((_, k) => k).sort((x, y) => t.classes[x] - t.classes[y]);
  const perClass = order.map((k) => classScore(t.classes[k], { tp: t.counts[3 * k], fp: t.counts[3 * k + 1], fn: t.counts[3 * k + 2] }));
  return summarise(perClass, t.matched, t.iouSum, t.agreed);
}

/** Adds per-class counts and pair sums (over images, over annotators) into one score. */
export function summarise(perClass: readonly ClassScore[], matched: number, iouSum: number, agreed: number): ShapeScore {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const c of perClass) {
    tp += c.tp;
    fp += c.fp;
    fn += c.fn;
  }
  const total = classScore(-1, { tp, fp, fn });
  return {
    class_id: -1,
    tp,
    fp,
    fn,
    precision: total.precision,
    recall: total.recall,
    f1: total.f1,
    matched,
    mean_iou: ratio(iouSum, matched),
    class_accuracy: ratio(agreed, matched),
    iou_sum: iouSum,
    class_agreed: agreed,
    per_class: perClass as ClassScore[],
  };
}

/** The sum of several scores (images of one annotator, say): counts and pair sums add, ratios are recomputed. */
export function addScores(scores: readonly ShapeScore[]): ShapeScore {
  const byClass = new Map<number, Counts>();
  let matched = 0;
  let iouSum = 0;
  let agreed = 0;
  for (const s of scores) {
    matched += s.matched;
    iouSum += s.iou_sum;
    agreed += s.class_agreed;
    for (const c of s.per_class) {
      const e = byClass.get(c.class_id) ?? { tp: 0, fp: 0, fn: 0 };
      byClass.set(c.class_id, { tp: e.tp + c.tp, fp: e.fp + c.fp, fn: e.fn + c.fn });
    }
  }
  const perClass = [...byClass.entries()].sort((a, b) => a[0] - b[0]).map(([c, n]) => classScore(c, n));
  return summarise(perClass, matched, iouSum, agreed);
}
