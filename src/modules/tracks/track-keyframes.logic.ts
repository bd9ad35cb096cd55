/**
 * Which of a tracked object's per-frame boxes become keyframes. Every frame would do, but then a person who fixes one
 * box fixes one frame only; instead the fewest keyframes are kept such that the linear interpolation between them
 * (what a track shows between keyframes) stays within `minIou` of every box left out — Douglas–Peucker over time, with
 * IoU as the distance. Pure: boxes in, the frames to keep out.
 */
import { boxIou } from '../../lib/mot-metrics.js';
import type { TrackBox } from './tracker.logic.js';

export interface BoxAt {
  frame: number;
  box: TrackBox;
}

/**
 * Keyframes that keep every left-out box at IoU ≥ 0.8 with the interpolated one: within a detector's own jitter.
 * Measured by bench/tracker.ts against the ground truth: 16–37 % of the boxes become keyframes (0.9: 56–76 %) with
 * MOTA and IDF1 unchanged and the mean IoU with the truth at most 1.6 points below a keyframe on every frame.
 */
export const KEYFRAME_MIN_IOU = 0.8;

export function lerpBox(a: TrackBox, b: TrackBox, t: number): TrackBox {
  const l = (p: number, q: number) => p + (q - p) * t;
  return { x: l(a.x, b.x), y: l(a.y, b.y), width: l(a.width, b.width), height: l(a.height, b.height) };
}

/** The indices (into `boxes`, sorted by frame) of the keyframes: always the first and the last. */
export function keyframeIndices(boxes: readonly BoxAt[], minIou = KEYFRAME_MIN_IOU): number[] {
  if (boxes.length <= 2) return boxes.map((_, i) => i);
  const keep = new Set<number>([0, boxes.length - 1]);
  const spans: [number, number][] = [[0, boxes.length - 1]];
  while (spans.length > 0) {
    const [i, j] = spans.pop()!;
    let worst = -1;
    let worstIou = minIou;
    const a = boxes[i];
    const b = boxes[j];
    for (let k = i + 1; k < j; k++) {
      const t = (boxes[k].frame - a.frame) / (b.frame - a.frame);
      const iou = boxIou(lerpBox(a.box, b.box, t), boxes[k].box);
      if (iou < worstIou) {
        worstIou = iou;
        worst = k;
      }
    }
    if (worst === -1) continue;
    keep.add(worst);
    spans.push([i, worst], [worst, j]);
  }
  return [...keep].sort((x, y) => x - y);
}
