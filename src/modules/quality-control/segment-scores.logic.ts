/**
 * Time segments of audio and video samples scored against ground truth (issue 29), as shapes are on images: segments
 * of the same class are matched one to one by temporal IoU ≥ 0.5 (the Hungarian method: as many pairs as possible,
 * then the highest IoU), a matched segment is a true positive, an unmatched one of the annotator a false positive, an
 * unmatched one of the truth a miss; F1 per class and over all classes. Pure.
 */
import { assign, FORBIDDEN } from '../../lib/assignment.js';
import { DEFAULT_MIN_IOU, f1Of, type Counts } from './shape-scores.logic.js';

/** A labelled time interval [start_s, end_s) of a clip, as samples store them. */
export interface TimeSegment {
  start_s: number;
  end_s: number;
  label: string;
}

export interface SegmentClassCounts extends Counts {
  label: string;
  f1: number;
}

/** Intersection over union of two time intervals (0 when they do not overlap). */
export function segmentIou(a: TimeSegment, b: TimeSegment): number {
  const inter = Math.max(0, Math.min(a.end_s, b.end_s) - Math.max(a.start_s, b.start_s));
  const union = (a.end_s - a.start_s) + (b.end_s - b.start_s) - inter;
  return union > 0 ? inter / union : 0;
}

/** Per class (sorted by label): TP, FP, FN of `segments` against `reference` on one clip. */
export function segmentCounts(reference: readonly TimeSegment[], segments: readonly TimeSegment[], minIou = DEFAULT_MIN_IOU): SegmentClassCounts[] {
  const labels = [...new Set([...reference, ...segments].map((s) => s.label))].sort();
  return labels.map((label) => {
    const ref = reference.filter((s) => s.label === label);
    const ann = segments.filter((s) => s.label === label);
    const cost = ref.map((r) => ann.map((a) => {
      const iou = segmentIou(r, a);
      return iou >= minIou && iou > 0 ? 1 - iou : FORBIDDEN;
    }));
    const tp = assign(cost).length;
    const c = { tp, fp: ann.length - tp, fn: ref.length - tp };
    return { label, ...c, f1: f1Of(c) };
  });
}

/** Adds per-class counts up (by label, sorted). */
export function addSegmentCounts(lists: readonly (readonly SegmentClassCounts[])[]): SegmentClassCounts[] {
  const sum = new Map<string, Counts>();
  for (const list of lists) {
    for (const c of list) {
      const s = sum.get(c.label) ?? { tp: 0, fp: 0, fn: 0 };
      sum.set(c.label, { tp: s.tp + c.tp, fp: s.fp + c.fp, fn: s.fn + c.fn });
    }
  }
  return [...sum].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([label, c]) => ({ label, ...c, f1: f1Of(c) }));
}
