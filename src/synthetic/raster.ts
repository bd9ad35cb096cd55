/** A run of filled pixels on one row: columns x0 (inclusive) to x1 (exclusive). */
export interface Span {
  y: number;
  x0: number;
  x1: number;
}

import type { Point } from '../imaging/geometry.js';

export type { Point };

/**
 * The pixels a polygon covers, as row spans clipped to the image. A pixel is covered when its centre lies inside the
 * polygon (even-odd rule), the convention COCO tools use when they rasterise polygons, so the mask, its area and the
 * polygon agree to within the pixels its edges cross.
 */
export function polygonSpans(points: readonly Point[], width: number, height: number): Span[] {
  let minY = Infinity;
  let maxY = -Infinity;
  for (const [, y] of points) {
    minY = Math.min(minY, y);
    maxY = Math.max(maxY, y);
  }
  const spans: Span[] = [];
  const crossings: number[] = [];
  const first = Math.max(0, Math.floor(minY));
  const last = Math.min(height - 1, Math.ceil(maxY));
  for (let y = first; y <= last; y++) {
    const cy = y + 0.5;
    crossings.length = 0;
    for (let i = 0; i < points.length; i++) {
      const [ax, ay] = points[i];
      const [bx, by] = points[(i + 1) % points.length];
      // Half-open on y, so a vertex shared by two edges is counted once.
      if ((ay <= cy && cy < by) || (by <= cy && cy < ay)) crossings.push(ax + ((cy - ay) * (bx - ax)) / (by - ay));
    }
    crossings.sort((a, b) => a - b);
    for (let i = 0; i + 1 < crossings.length; i += 2) {
      const x0 = Math.max(0, Math.ceil(crossings[i] - 0.5));
      const x1 = Math.min(width, Math.ceil(crossings[i + 1] - 0.5));
      if (x1 > x0) spans.push({ y, x0, x1 });
    }
  }
  return spans;
}

export function spansArea(spans: readonly Span[]): number {
  let area = 0;
  for (const span of spans) area += span.x1 - span.x0;
  return area;
}

