/**
 * Annotation geometry in original-image pixels, origin top-left. Pure functions: they validate what a client sent
 * against the image's size and return the geometry to store, or throw a GeometryError that says where in the
 * geometry the problem is.
 *
 * Shapes that reach past the image are cut to it (a box is intersected with the image rectangle, a polygon is
 * clipped to it); a shape with no area left inside the image is refused.
 */
import { rleBbox, rleProblem, type Box, type Rle } from './rle.js';

export type { Box };
export type Point = [x: number, y: number];

export interface ImageSize {
  width: number;
  height: number;
}

/** Most vertices a polygon may have; enough for traced masks, small enough to keep requests cheap. */
export const MAX_POLYGON_POINTS = 100_000;

/** A geometry that cannot be stored; `path` points into the geometry object (e.g. `['points', 3, 0]`). */
export class GeometryError extends Error {
  constructor(
    readonly path: (string | number)[],
    message: string,
  ) {
    super(message);
  }
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function numberAt(object: Record<string, unknown>, key: string): number {
  const value = object[key];
  if (value === undefined) throw new GeometryError([key], 'Field required');
  if (!isFiniteNumber(value)) throw new GeometryError([key], 'must be a finite number');
  return value;
}

/** The part of a box inside the image, or null when nothing of it is inside. */
export function clampBox(box: Box, size: ImageSize): Box | null {
  if (box.x >= 0 && box.y >= 0 && box.x + box.width <= size.width && box.y + box.height <= size.height) {
    return { x: box.x, y: box.y, width: box.width, height: box.height };
  }
  const x0 = Math.max(0, box.x);
  const y0 = Math.max(0, box.y);
  const x1 = Math.min(size.width, box.x + box.width);
  const y1 = Math.min(size.height, box.y + box.height);
  if (x1 <= x0 || y1 <= y0) return null;
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** `{x, y, width, height}` with width and height > 0, cut to the image. */
export function parseBox(geometry: Record<string, unknown>, size: ImageSize): Box {
  const box = {
    x: numberAt(geometry, 'x'),
    y: numberAt(geometry, 'y'),
    width: numberAt(geometry, 'width'),
    height: numberAt(geometry, 'height'),
  };
  if (box.width <= 0) throw new GeometryError(['width'], 'must be greater than 0');
  if (box.height <= 0) throw new GeometryError(['height'], 'must be greater than 0');
  const clamped = clampBox(box, size);
  if (!clamped) throw new GeometryError([], `box lies outside the ${size.width}×${size.height} image`);
  // 1e-300 × 1e-300 is positive on each side but has no area in double precision (it would export as area 0).
  if (!(clamped.width * clamped.height > 0)) throw new GeometryError([], 'the box has no area');
  return clamped;
}

/** The box around points: their bounds (a loop, not Math.min(...points): a polygon may have 100,000 of them). */
export function pointsBox(points: readonly Point[]): Box {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const [x, y] of points) {
    if (x < minX) minX = x;
    if (y < minY) minY = y;
    if (x > maxX) maxX = x;
    if (y > maxY) maxY = y;
  }
  return { x: minX, y: minY, width: maxX - minX, height: maxY - minY };
}

/**
 * The box of an annotation's geometry, stored or read from a dataset: a bbox is its own box, a polygon's is the
 * bounds of its points, a mask's the `bbox` stored with it or else its RLE's; null for a classification (no extent).
 */
export function geometryBox(type: string, geometry: object): Box | null {
  const g = geometry as Partial<Box> & { points?: Point[]; bbox?: Box; rle?: Rle };
  switch (type) {
    case 'bbox':
      return { x: g.x!, y: g.y!, width: g.width!, height: g.height! };
    case 'polygon':
      return g.points && g.points.length > 0 ? pointsBox(g.points) : null;
    case 'mask':
      return g.bbox ?? (g.rle ? rleBbox(g.rle) : null);
    default:
      return null;
  }
}

/** Shoelace area; positive for loops that run clockwise on screen (y down). */
export function signedPolygonArea(points: readonly Point[]): number {
  let twice = 0;
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
    twice += points[j][0] * points[i][1] - points[i][0] * points[j][1];
  }
  return twice / 2;
}

/** Area enclosed by a polygon, whatever its winding. */
export function polygonArea(points: readonly Point[]): number {
  return Math.abs(signedPolygonArea(points));
}

const inside = (p: Point, size: ImageSize) => p[0] >= 0 && p[1] >= 0 && p[0] <= size.width && p[1] <= size.height;

type Edge = { axis: 0 | 1; limit: number; keepBelow: boolean };

/** One Sutherland–Hodgman pass: keeps the side of an axis-aligned line the image is on. */
function clipAgainst(points: Point[], { axis, limit, keepBelow }: Edge): Point[] {
  const keeps = (p: Point) => (keepBelow ? p[axis] <= limit : p[axis] >= limit);
  const crossing = (a: Point, b: Point): Point => {
    const t = (limit - a[axis]) / (b[axis] - a[axis]);
    const other = a[1 - axis] + t * (b[1 - axis] - a[1 - axis]);
    return axis === 0 ? [limit, other] : [other, limit];
  };
  const out: Point[] = [];
  for (let i = 0; i < points.length; i++) {
    const current = points[i];
    const previous = points[(i + points.length - 1) % points.length];
    if (keeps(current)) {
      if (!keeps(previous)) out.push(crossing(previous, current));
      out.push(current);
    } else if (keeps(previous)) {
      out.push(crossing(previous, current));
    }
  }
  return out;
}

/** The polygon clipped to the image rectangle (it may gain vertices where it crosses the border). */
export function clipPolygon(points: Point[], size: ImageSize): Point[] {
  if (points.every((p) => inside(p, size))) return points;
  const edges: Edge[] = [
    { axis: 0, limit: 0, keepBelow: false },
    { axis: 0, limit: size.width, keepBelow: true },
    { axis: 1, limit: 0, keepBelow: false },
    { axis: 1, limit: size.height, keepBelow: true },
  ];
  return edges.reduce((clipped, edge) => (clipped.length === 0 ? clipped : clipAgainst(clipped, edge)), points);
}

/** `{points: [[x, y], ...]}` with at least 3 points enclosing some area, clipped to the image. */
export function parsePolygon(geometry: Record<string, unknown>, size: ImageSize): { points: Point[] } {
  const raw = geometry.points;
  if (raw === undefined) throw new GeometryError(['points'], 'Field required');
  if (!Array.isArray(raw)) throw new GeometryError(['points'], 'must be an array of [x, y] pairs');
  if (raw.length < 3) throw new GeometryError(['points'], 'a polygon needs at least 3 points');
  if (raw.length > MAX_POLYGON_POINTS) throw new GeometryError(['points'], `a polygon may have at most ${MAX_POLYGON_POINTS} points`);
  const points: Point[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const p = raw[i];
    if (!Array.isArray(p) || p.length !== 2) throw new GeometryError(['points', i], 'must be an [x, y] pair');
    if (!isFiniteNumber(p[0])) throw new GeometryError(['points', i, 0], 'must be a finite number');
    if (!isFiniteNumber(p[1])) throw new GeometryError(['points', i, 1], 'must be a finite number');
    points[i] = [p[0], p[1]];
  }
  if (polygonArea(points) === 0) throw new GeometryError(['points'], 'the polygon encloses no area');
  const clipped = clipPolygon(points, size);
  if (clipped.length < 3 || polygonArea(clipped) === 0) {
    throw new GeometryError(['points'], `the polygon lies outside the ${size.width}×${size.height} image`);
  }
  return { points: clipped };
}

export interface MaskGeometry {
  rle: Rle;
  /** Tight box around the foreground, computed here; a client's own `bbox` is ignored. */
  bbox: Box;
  /** A crowd region (COCO `iscrowd: 1`, e.g. from a crowd annotation that came in); absent for an object's mask. */
  crowd?: true;
}

/**
 * `{rle: {size: [height, width], counts}, crowd?: true}`: COCO uncompressed RLE the size of the image, not empty.
 * `crowd: true` marks a crowd region, exported to COCO with `iscrowd: 1`; a drawn mask is an instance (`iscrowd: 0`).
 */
export function parseMask(geometry: Record<string, unknown>, size: ImageSize): MaskGeometry {
  const rle = geometry.rle as Record<string, unknown> | undefined;
  if (rle === undefined) throw new GeometryError(['rle'], 'Field required');
  if (typeof rle !== 'object' || rle === null || Array.isArray(rle)) {
    throw new GeometryError(['rle'], 'must be an object {size: [height, width], counts: [...]}');
  }
  const rleSize = rle.size;
  if (!Array.isArray(rleSize) || rleSize.length !== 2 || !rleSize.every((n) => Number.isInteger(n) && n > 0)) {
    throw new GeometryError(['rle', 'size'], 'must be [height, width], two positive integers');
  }
  const counts = rle.counts;
  if (!Array.isArray(counts)) {
    throw new GeometryError(['rle', 'counts'], 'must be an array of run lengths (uncompressed COCO RLE)');
  }
  if (rleSize[0] !== size.height || rleSize[1] !== size.width) {
    throw new GeometryError(['rle', 'size'], `must equal the image size [${size.height}, ${size.width}] (height, width)`);
  }
  const value: Rle = { size: [rleSize[0], rleSize[1]], counts };
  const problem = rleProblem(value, size.height, size.width);
  if (problem) throw new GeometryError(['rle', 'counts'], problem);
  const bbox = rleBbox(value);
  if (!bbox) throw new GeometryError(['rle', 'counts'], 'the mask has no foreground pixels');
  if (geometry.crowd !== undefined && typeof geometry.crowd !== 'boolean') throw new GeometryError(['crowd'], 'must be a boolean');
  return geometry.crowd === true ? { rle: value, bbox, crowd: true } : { rle: value, bbox };
}

export const ANNOTATION_TYPES = ['bbox', 'polygon', 'mask', 'classification'] as const;
export type AnnotationType = (typeof ANNOTATION_TYPES)[number];

/** Validates a geometry for its annotation type and returns what to store (only the known keys). */
export function parseGeometry(type: AnnotationType, geometry: Record<string, unknown>, size: ImageSize): object {
  switch (type) {
    case 'bbox':
      return parseBox(geometry, size);
    case 'polygon':
      return parsePolygon(geometry, size);
    case 'mask':
      return parseMask(geometry, size);
    case 'classification':
      // The class is the label; anything in the geometry would be silently lost, so it is refused.
      for (const key in geometry) throw new GeometryError([key], 'a classification has no geometry; send {}');
      return {};
  }
}
