/** A scored box in corner form (x1, y1, x2, y2), with the index of the model output row it came from. */
export interface Candidate {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  score: number;
  classId: number;
  /** Row of the model output, used to find a segmentation head's mask coefficients. */
  index: number;
}

export function iou(a: Candidate, b: Candidate): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / ((a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter);
}

/**
 * Greedy class-aware non-maximum suppression: highest score first, a box is dropped when it overlaps a kept box
 * of the same class by more than `iouThreshold`. Returns at most `maxDetections`, best first.
 */
export function nonMaxSuppression(candidates: Candidate[], iouThreshold: number, maxDetections: number): Candidate[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score);
  const kept: Candidate[] = [];
  for (const candidate of sorted) {
    if (kept.length >= maxDetections) break;
    let suppressed = false;
    for (const other of kept) {
      if (other.classId === candidate.classId && iou(other, candidate) > iouThreshold) {
        suppressed = true;
        break;
      }
    }
    if (!suppressed) kept.push(candidate);
  }
  return kept;
}
