/**
 * Measures of stored annotation shapes (issue 25): the area each shape covers, the overlap (IoU) of two shapes of one
 * type, COCO's object keypoint similarity (OKS) for keypoint instances, and a distance between open paths and point
 * sets. Pure functions over the geometries `parseGeometry` (geometry.ts) stores; pixels, origin top-left.
 *
 * Accuracy, per method:
 * - rotated boxes: exact (convex polygon clipping, Sutherland–Hodgman against the other box);
 * - ellipses: each ellipse is a 64-gon whose radii are scaled so that its area equals the ellipse's (π·rx·ry); their
 *   overlap is clipped exactly. The 64-gon departs from the ellipse by under 0.2 % of the radius, so the IoU is within
 *   about 0.005 of the true one (the tests compare with a Monte Carlo estimate);
 * - polygons (with parts and holes, concave or not) and mixed area shapes (a box with a polygon, an ellipse with a
 *   box): scanline integration — the union of both envelopes is cut into POLYGON_ROWS horizontal rows; on each row's
 *   centre line the inside of a shape is a set of exact x intervals (even–odd crossings of each ring, parts united,
 *   holes taken away), and intersections and unions of intervals are exact. Only y is sampled: the error is
 *   O(h²/POLYGON_ROWS²) along smooth edges and at most one row's height times a vertex's width at a vertex, about
 *   1e-3 of the IoU for shapes that fill a fair part of their envelope;
 * - masks: exact, by merging the two RLEs' foreground runs (both masks are the image's size);
 * - polylines and point sets have no area: their distance is the symmetric mean closest-point distance below.
 */
import { signedPolygonArea, rotatedCorners, type Box, type Point, type RotatedBox } from './geometry.js';
import { rleArea, type Rle } from './rle.js';

export interface EllipseShape {
  cx: number;
  cy: number;
  rx: number;
  ry: number;
  rotation: number;
}

export interface PolygonShape {
  points: Point[];
  parts?: Point[][];
  holes?: Point[][];
}

/** Sides of the polygon standing in for an ellipse. */
export const ELLIPSE_SIDES = 64;
/** Rows of the scanline integration of polygon overlaps. */
export const POLYGON_ROWS = 2048;

/** The area a shape covers, in square pixels; 0 for shapes without area (polyline, points, keypoints, classification). */
export function shapeArea(type: string, geometry: object): number {
  const g = geometry as Record<string, any>;
  switch (type) {
    case 'bbox':
      return Math.max(0, g.width) * Math.max(0, g.height);
    case 'polygon':
      return polygonShapeArea(g as PolygonShape);
    case 'mask':
      return g.rle ? rleArea(g.rle as Rle) : 0;
    case 'ellipse':
      return Math.PI * Math.abs(g.rx) * Math.abs(g.ry);
    default:
      return 0;
  }
}

/**
 * The area of a polygon object: its parts united, its holes taken away. By default the parts' shoelace areas summed
 * less the holes' — exact for what COCO's multi-polygons and CVAT's groups hold (parts that do not overlap, holes
 * inside them) and cheap enough for a quality report over a million shapes. `scan: true` measures overlapping parts
 * and holes reaching outside every part correctly, by scanline integration (POLYGON_ROWS rows).
 */
export function polygonShapeArea(g: PolygonShape, options: { scan?: boolean } = {}): number {
  const parts = g.parts && g.parts.length > 0 ? g.parts : [g.points];
  const holes = g.holes ?? [];
  if (parts.length === 1 && holes.length === 0) return Math.abs(signedPolygonArea(parts[0]));
  if (options.scan) return scanlineAreas([{ parts, holes }], boxOfRings(parts)).areas[0];
  const sum = parts.reduce((s, p) => s + Math.abs(signedPolygonArea(p)), 0) - holes.reduce((s, h) => s + Math.abs(signedPolygonArea(h)), 0);
  return Math.max(0, sum);
}

/** Intersection over union of two shapes of the same type; null when the type has no area or the types differ in kind. */
export function shapeIou(type: string, a: object, b: object): number | null {
  switch (type) {
    case 'bbox':
      return boxIou(a as RotatedBox, b as RotatedBox);
    case 'ellipse':
      return convexIou(ellipsePolygon(a as EllipseShape), ellipsePolygon(b as EllipseShape));
    case 'polygon':
      return regionIou(polygonRegion(a as PolygonShape), polygonRegion(b as PolygonShape));
    case 'mask':
      return maskIou((a as { rle: Rle }).rle, (b as { rle: Rle }).rle);
    default:
      return null;
  }
}

/** IoU of two area shapes of any of bbox, polygon and ellipse (a box against a polygon, say); null for other types. */
export function mixedShapeIou(typeA: string, a: object, typeB: string, b: object): number | null {
  if (typeA === typeB) return shapeIou(typeA, a, b);
  const ra = areaRegion(typeA, a);
  const rb = areaRegion(typeB, b);
  return ra && rb ? regionIou(ra, rb) : null;
}

/** Two boxes, each maybe rotated: exact. */
export function boxIou(a: RotatedBox, b: RotatedBox): number {
  if (!a.rotation && !b.rotation) {
    const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
    const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
    const inter = ix * iy;
    const union = a.width * a.height + b.width * b.height - inter;
    return union <= 0 ? 0 : inter / union;
  }
  return convexIou(rotatedCorners(a), rotatedCorners(b));
}

/** IoU of two convex polygons (any winding): exact. */
export function convexIou(a: Point[], b: Point[]): number {
  const areaA = Math.abs(signedPolygonArea(a));
  const areaB = Math.abs(signedPolygonArea(b));
  const inter = Math.abs(signedPolygonArea(clipConvex(a, b)));
  const union = areaA + areaB - inter;
  return union <= 0 ? 0 : Math.min(1, inter / union);
}

/**
 * Sutherland–Hodgman: the part of `subject` (any simple polygon) inside the convex polygon `clip` (any winding).
 * A concave subject may come back with zero-width bridges along the clip's edges; they add no area.
 */
export function clipConvex(subject: Point[], clip: Point[]): Point[] {
  if (clip.length < 3) return [];
  // Orient the clip so that signedPolygonArea < 0; then a point is inside an edge a→b when the cross product
  // (b − a) × (p − a) is ≤ 0 (on the edge's inner side, the line itself included).
  const ccw = signedPolygonArea(clip) < 0 ? clip : [...clip].reverse();
  let out = subject;
  for (let e = 0; e < ccw.length && out.length > 0; e++) {
    const [ax, ay] = ccw[e];
    const [bx, by] = ccw[(e + 1) % ccw.length];
    const side = (p: Point) => (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax);
    const input = out;
    out = [];
    for (let i = 0; i < input.length; i++) {
      const current = input[i];
      const previous = input[(i + input.length - 1) % input.length];
      const sc = side(current);
      const sp = side(previous);
      if (sc <= 0) {
        if (sp > 0) out.push(crossing(previous, current, sp, sc));
        out.push(current);
      } else if (sp <= 0) {
        out.push(crossing(previous, current, sp, sc));
      }
    }
  }
  return out;
}

const crossing = (p: Point, q: Point, sp: number, sq: number): Point => {
  const t = sp / (sp - sq);
  return [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
};

/**
 * An ellipse as a regular `sides`-gon in its own frame, radii scaled so that the polygon's area is the ellipse's
 * (a regular n-gon inscribed in a circle of radius r covers n/2·sin(2π/n)·r²).
 */
export function ellipsePolygon(e: EllipseShape, sides = ELLIPSE_SIDES): Point[] {
  const scale = Math.sqrt((2 * Math.PI) / (sides * Math.sin((2 * Math.PI) / sides)));
  const rad = ((e.rotation ?? 0) * Math.PI) / 180;
  const cos = Math.cos(rad);
  const sin = Math.sin(rad);
  const out: Point[] = new Array(sides);
  for (let i = 0; i < sides; i++) {
    const t = (2 * Math.PI * i) / sides;
    const dx = e.rx * scale * Math.cos(t);
    const dy = e.ry * scale * Math.sin(t);
    out[i] = [e.cx + dx * cos - dy * sin, e.cy + dx * sin + dy * cos];
  }
  return out;
}

/** Two masks of one image: exact, over their column-major runs. */
export function maskIou(a: Rle, b: Rle): number {
  if (a.size[0] !== b.size[0] || a.size[1] !== b.size[1]) return 0;
  const runsA = foregroundRuns(a);
  const runsB = foregroundRuns(b);
  let inter = 0;
  for (let i = 0, j = 0; i < runsA.length && j < runsB.length; ) {
    const lo = Math.max(runsA[i][0], runsB[j][0]);
    const hi = Math.min(runsA[i][1], runsB[j][1]);
    if (hi > lo) inter += hi - lo;
    if (runsA[i][1] < runsB[j][1]) i++;
    else j++;
  }
  const union = rleArea(a) + rleArea(b) - inter;
  return union <= 0 ? 0 : inter / union;
}

function foregroundRuns(rle: Rle): [number, number][] {
  const runs: [number, number][] = [];
  let index = 0;
  for (let k = 0; k < rle.counts.length; k++) {
    if (k % 2 === 1 && rle.counts[k] > 0) runs.push([index, index + rle.counts[k]]);
    index += rle.counts[k];
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------------------------
// Scanline integration of regions (parts united, holes taken away)

interface Region {
  parts: Point[][];
  holes: Point[][];
}

function polygonRegion(g: PolygonShape): Region {
  return { parts: g.parts && g.parts.length > 0 ? g.parts : [g.points], holes: g.holes ?? [] };
}

function areaRegion(type: string, g: object): Region | null {
  switch (type) {
    case 'bbox':
      return { parts: [rotatedCorners(g as RotatedBox)], holes: [] };
    case 'ellipse':
      return { parts: [ellipsePolygon(g as EllipseShape)], holes: [] };
    case 'polygon':
      return polygonRegion(g as PolygonShape);
    default:
      return null;
  }
}

function boxOfRings(rings: Point[][]): Box {
  let minY = Infinity;
  let maxY = -Infinity;
  let minX = Infinity;
  let maxX = -Infinity;
  for (const ring of rings) {
    for (const [x, y] of ring) {
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
    }
  }
  return { x: minX, y: minY, width: maxX - minX, height: maxY - minY };
}

type Intervals = number[]; // [lo0, hi0, lo1, hi1, ...] sorted, disjoint

/** The x intervals inside one ring on the line y (even–odd rule). */
function ringIntervals(ring: Point[], y: number): Intervals {
  const xs: number[] = [];
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if (yi > y !== yj > y) xs.push(xi + ((y - yi) / (yj - yi)) * (xj - xi));
  }
  xs.sort((p, q) => p - q);
  return xs;
}

function unite(a: Intervals, b: Intervals): Intervals {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const all: [number, number][] = [];
  for (let i = 0; i < a.length; i += 2) all.push([a[i], a[i + 1]]);
  for (let i = 0; i < b.length; i += 2) all.push([b[i], b[i + 1]]);
  all.sort((p, q) => p[0] - q[0]);
  const out: Intervals = [];
  for (const [lo, hi] of all) {
    if (out.length > 0 && lo <= out[out.length - 1]) out[out.length - 1] = Math.max(out[out.length - 1], hi);
    else out.push(lo, hi);
  }
  return out;
}

function intersect(a: Intervals, b: Intervals): Intervals {
  const out: Intervals = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const lo = Math.max(a[i], b[j]);
    const hi = Math.min(a[i + 1], b[j + 1]);
    if (hi > lo) out.push(lo, hi);
    if (a[i + 1] < b[j + 1]) i += 2;
    else j += 2;
  }
  return out;
}

function subtract(a: Intervals, b: Intervals): Intervals {
  if (b.length === 0) return a;
  const out: Intervals = [];
  for (let i = 0; i < a.length; i += 2) {
    let lo = a[i];
    const hi = a[i + 1];
    for (let j = 0; j < b.length && lo < hi; j += 2) {
      if (b[j + 1] <= lo || b[j] >= hi) continue;
      if (b[j] > lo) out.push(lo, b[j]);
      lo = Math.max(lo, b[j + 1]);
    }
    if (lo < hi) out.push(lo, hi);
  }
  return out;
}

const length = (a: Intervals) => {
  let sum = 0;
  for (let i = 0; i < a.length; i += 2) sum += a[i + 1] - a[i];
  return sum;
};

function regionIntervals(r: Region, y: number): Intervals {
  let inside: Intervals = [];
  for (const part of r.parts) inside = unite(inside, ringIntervals(part, y));
  let holes: Intervals = [];
  for (const hole of r.holes) holes = unite(holes, ringIntervals(hole, y));
  return subtract(inside, holes);
}

/** The area of each region and of the intersection of the first two, over the rows of `box`. */
function scanlineAreas(regions: Region[], box: Box): { areas: number[]; intersection: number } {
  const areas = regions.map(() => 0);
  let intersection = 0;
  if (!(box.height > 0)) return { areas, intersection };
  const dy = box.height / POLYGON_ROWS;
  for (let row = 0; row < POLYGON_ROWS; row++) {
    const y = box.y + (row + 0.5) * dy;
    const spans = regions.map((r) => regionIntervals(r, y));
    spans.forEach((s, k) => (areas[k] += length(s) * dy));
    if (spans.length > 1) intersection += length(intersect(spans[0], spans[1])) * dy;
  }
  return { areas, intersection };
}

function regionIou(a: Region, b: Region): number {
  const ba = boxOfRings(a.parts);
  const bb = boxOfRings(b.parts);
  if (ba.x > bb.x + bb.width || bb.x > ba.x + ba.width || ba.y > bb.y + bb.height || bb.y > ba.y + ba.height) return 0;
  const y0 = Math.min(ba.y, bb.y);
  const y1 = Math.max(ba.y + ba.height, bb.y + bb.height);
  const { areas, intersection } = scanlineAreas([a, b], { x: 0, y: y0, width: 0, height: y1 - y0 });
  const union = areas[0] + areas[1] - intersection;
  return union <= 0 ? 0 : Math.min(1, intersection / union);
}

// ---------------------------------------------------------------------------------------------------------------
// Keypoints: OKS

/** COCO's per-point sigmas of its 17-point person skeleton (nose, eyes, ears, shoulders, elbows, wrists, hips, knees, ankles). */
export const COCO_PERSON_SIGMAS: readonly number[] = [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87, 0.87, 0.89, 0.89].map((s) => s / 10);

/**
 * The sigma of every point of a skeleton that is not COCO's person: the mean of COCO's person sigmas (≈ 0.067), a
 * point of average difficulty. A skeleton of 17 points gets COCO's own sigmas.
 */
export const UNIFORM_SIGMA = COCO_PERSON_SIGMAS.reduce((a, b) => a + b, 0) / COCO_PERSON_SIGMAS.length;

export function defaultSigmas(n: number): number[] {
  return n === COCO_PERSON_SIGMAS.length ? [...COCO_PERSON_SIGMAS] : new Array(n).fill(UNIFORM_SIGMA);
}

/**
 * COCO's object keypoint similarity of a prediction (or a second annotation) `b` to the ground truth `a`: the mean
 * over the ground truth's labelled points (v > 0) of exp(−d² / (2·s·(2σ)²)), where d is the distance between the
 * points, s the object's area (COCO uses the segment's area; here `area`, by default the area of the ground truth's
 * keypoint box or, without one, of its labelled points' envelope) and σ the point's sigma. A point `b` did not label
 * counts as far away (it contributes 0), as in COCO. Null when the ground truth labels no point.
 */
export function oks(a: readonly (readonly number[])[], b: readonly (readonly number[])[], options: { area?: number; sigmas?: readonly number[]; bbox?: Box } = {}): number | null {
  const sigmas = options.sigmas ?? defaultSigmas(a.length);
  const labelled = a.map((p, i) => i).filter((i) => a[i][2] > 0);
  if (labelled.length === 0) return null;
  let area = options.area;
  if (area === undefined) {
    const box = options.bbox ?? boxOfRings([labelled.map((i) => [a[i][0], a[i][1]] as Point)]);
    area = box.width * box.height;
  }
  const s = Math.max(area, Number.EPSILON);
  let sum = 0;
  for (const i of labelled) {
    const q = b[i];
    if (!q || q[2] === 0) continue;
    const d2 = (a[i][0] - q[0]) ** 2 + (a[i][1] - q[1]) ** 2;
    const k2 = (2 * sigmas[i]) ** 2;
    sum += Math.exp(-d2 / (2 * s * k2));
  }
  return sum / labelled.length;
}

// ---------------------------------------------------------------------------------------------------------------
// Polylines and point sets: distance

/** Samples a path takes along its length, besides its vertices, for the polyline distance. */
export const POLYLINE_SAMPLES = 256;

/**
 * The symmetric mean closest-point distance of two open paths, in pixels: each path is sampled at its vertices and at
 * POLYLINE_SAMPLES points evenly spaced along its length; each sample's distance to the other path (to its nearest
 * segment, exactly) is averaged, and the two directions' means are averaged. 0 for the same path; d for two parallel
 * segments d apart of the same extent. A path of one point is that point.
 */
export function polylineDistance(a: readonly Point[], b: readonly Point[]): number {
  return (meanDistanceToPath(samplePath(a), b) + meanDistanceToPath(samplePath(b), a)) / 2;
}

/** The symmetric mean nearest-point distance of two point sets (the "points" shape), in pixels. */
export function pointSetDistance(a: readonly Point[], b: readonly Point[]): number {
  const mean = (from: readonly Point[], to: readonly Point[]) =>
    from.reduce((sum, p) => sum + Math.min(...to.map((q) => Math.hypot(p[0] - q[0], p[1] - q[1]))), 0) / from.length;
  if (a.length === 0 || b.length === 0) return Infinity;
  return (mean(a, b) + mean(b, a)) / 2;
}

function samplePath(path: readonly Point[]): Point[] {
  if (path.length < 2) return [...path];
  const lengths = [0];
  for (let i = 1; i < path.length; i++) lengths.push(lengths[i - 1] + Math.hypot(path[i][0] - path[i - 1][0], path[i][1] - path[i - 1][1]));
  const total = lengths[lengths.length - 1];
  const out: Point[] = [...path];
  if (total === 0) return out;
  for (let k = 0, seg = 1; k < POLYLINE_SAMPLES; k++) {
    const at = ((k + 0.5) / POLYLINE_SAMPLES) * total;
    while (seg < path.length - 1 && lengths[seg] < at) seg++;
    const span = lengths[seg] - lengths[seg - 1];
    const t = span === 0 ? 0 : (at - lengths[seg - 1]) / span;
    out.push([path[seg - 1][0] + t * (path[seg][0] - path[seg - 1][0]), path[seg - 1][1] + t * (path[seg][1] - path[seg - 1][1])]);
  }
  return out;
}

function meanDistanceToPath(samples: readonly Point[], path: readonly Point[]): number {
  if (samples.length === 0 || path.length === 0) return Infinity;
  let sum = 0;
  for (const p of samples) sum += distanceToPath(p, path);
  return sum / samples.length;
}

/** The distance from a point to the nearest point of a path (its segments, or its one point). */
export function distanceToPath(p: Point, path: readonly Point[]): number {
  if (path.length === 1) return Math.hypot(p[0] - path[0][0], p[1] - path[0][1]);
  let best = Infinity;
  for (let i = 1; i < path.length; i++) {
    const [ax, ay] = path[i - 1];
    const [bx, by] = path[i];
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((p[0] - ax) * dx + (p[1] - ay) * dy) / len2));
    const d = Math.hypot(p[0] - (ax + t * dx), p[1] - (ay + t * dy));
    if (d < best) best = d;
  }
  return best;
}

/** How many distinct points a path or point set has (points within `epsilon` px on both axes are one), counting up to `limit`. */
export function distinctPoints(points: readonly (readonly number[])[], epsilon = 1e-6, limit = Infinity): number {
  const kept: (readonly number[])[] = [];
  for (const p of points) {
    if (!kept.some((q) => Math.abs(q[0] - p[0]) <= epsilon && Math.abs(q[1] - p[1]) <= epsilon)) kept.push(p);
    if (kept.length >= limit) break;
  }
  return kept.length;
}
