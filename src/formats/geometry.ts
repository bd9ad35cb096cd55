import { normalizeDegrees, pointsBox, rotatedCorners, signedPolygonArea, type RotatedBox } from '../imaging/geometry.js';
import type { Box } from '../imaging/rle.js';
import type { Annotation, Point } from './dataset.js';

/** Drops the repeated first point of an explicitly closed polygon (formats disagree on whether to repeat it). */
export function openRing(points: Point[]): Point[] {
  if (points.length > 1) {
    const [fx, fy] = points[0];
    const [lx, ly] = points[points.length - 1];
    if (fx === lx && fy === ly) return points.slice(0, -1);
  }
  return points;
}

/** The box when the polygon is exactly an axis-aligned rectangle (a box some tool saved as a polygon), else null. */
export function rectangleOf(points: Point[]): Box | null {
  const ring = openRing(points);
  if (ring.length !== 4) return null;
  const xs = new Set(ring.map((p) => p[0]));
  const ys = new Set(ring.map((p) => p[1]));
  if (xs.size !== 2 || ys.size !== 2) return null;
  for (let i = 0; i < 4; i++) {
    const a = ring[i];
    const b = ring[(i + 1) % 4];
    if (a[0] !== b[0] && a[1] !== b[1]) return null;
  }
  return pointsBox(ring);
}

/** Rounds to 2 decimals: enough for sub-pixel geometry, and keeps exported text free of float noise. */
export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * Fills a polygon into a row-major label image with `value` (even-odd rule, pixel centres), clipped to the image.
 */
export function fillPolygon(target: Uint8Array, width: number, height: number, points: Point[], value: number): void {
  const n = points.length;
  if (n < 3) return;
  const box = pointsBox(points);
  const yStart = Math.max(0, Math.floor(box.y));
  const yEnd = Math.min(height - 1, Math.ceil(box.y + box.height));
  const crossings: number[] = [];
  for (let y = yStart; y <= yEnd; y++) {
    const cy = y + 0.5;
    crossings.length = 0;
    for (let i = 0, j = n - 1; i < n; j = i++) {
      const [xi, yi] = points[i];
      const [xj, yj] = points[j];
      if (yi > cy !== yj > cy) crossings.push(xi + ((cy - yi) * (xj - xi)) / (yj - yi));
    }
    crossings.sort((a, b) => a - b);
    for (let k = 0; k + 1 < crossings.length; k += 2) {
      const from = Math.max(0, Math.ceil(crossings[k] - 0.5));
      const to = Math.min(width - 1, Math.floor(crossings[k + 1] - 0.5));
      target.fill(value, y * width + from, to >= from ? y * width + to + 1 : y * width + from);
    }
  }
}

/**
 * How far (pixels) a quad's corners may lie from the rectangle fitted to it and still be read as a rotated box:
 * DOTA's corners are hand-placed integers, so 1 px, or 1 % of the quad's diagonal for large objects.
 */
function rectangleTolerance(quad: Point[]): number {
  const diagonal = Math.hypot(quad[2][0] - quad[0][0], quad[2][1] - quad[0][1]);
  return Math.max(1, diagonal * 0.01);
}

/**
 * The rotated box a quad is, or null when it is not (near enough) a rectangle. DOTA lists the corners clockwise from
 * the object's "top left" (x1 y1 → x2 y2 is its top edge); a box's `rotation` is that edge's angle, clockwise on
 * screen, and `width` its length. A quad listed counter-clockwise is read in reverse from its first corner.
 */
export function quadToBox(input: Point[]): RotatedBox | null {
  const quad = signedPolygonArea(input) < 0 ? [input[0], input[3], input[2], input[1]] : input;
  const [p1, p2, p3, p4] = quad;
  const cx = (p1[0] + p2[0] + p3[0] + p4[0]) / 4;
  const cy = (p1[1] + p2[1] + p3[1] + p4[1]) / 4;
  const width = (Math.hypot(p2[0] - p1[0], p2[1] - p1[1]) + Math.hypot(p3[0] - p4[0], p3[1] - p4[1])) / 2;
  const height = (Math.hypot(p3[0] - p2[0], p3[1] - p2[1]) + Math.hypot(p4[0] - p1[0], p4[1] - p1[1])) / 2;
  if (!(width > 0 && height > 0)) return null;
  const dx = (p2[0] - p1[0] + p3[0] - p4[0]) / 2;
  const dy = (p2[1] - p1[1] + p3[1] - p4[1]) / 2;
  const degrees = normalizeDegrees(Math.round((Math.atan2(dy, dx) * 180) / Math.PI * 1e6) / 1e6);
  const box: RotatedBox = { x: cx - width / 2, y: cy - height / 2, width, height, ...(degrees === 0 ? {} : { rotation: degrees }) };
  const corners = rotatedCorners(box);
  const tolerance = rectangleTolerance(quad);
  return corners.every((c, i) => Math.hypot(c[0] - quad[i][0], c[1] - quad[i][1]) <= tolerance) ? box : null;
}

/**
 * Polygons of one class sharing a group id in one image are one object: a polygon in parts (as COCO's
 * multi-polygon). CVAT groups and LabelMe group ids say so; the first polygon keeps its place in the list.
 */
export function mergeGroupedPolygons(annotations: Annotation[]): Annotation[] {
  const out: Annotation[] = [];
  const first = new Map<string, Annotation & { type: 'polygon' }>();
  for (const a of annotations) {
    if (a.type !== 'polygon' || a.groupId === undefined) {
      out.push(a);
      continue;
    }
    const key = `${a.groupId}\u0000${a.className}`;
    const head = first.get(key);
    if (!head) {
      first.set(key, a);
      out.push(a);
      continue;
    }
    head.geometry = { points: head.geometry.points, parts: [...(head.geometry.parts ?? [head.geometry.points]), a.geometry.points] };
    if (a.attributes) head.attributes = { ...a.attributes, ...head.attributes };
  }
  return out;
}
