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

/** A rotated box: `{x, y, width, height}` before rotation and `rotation`, degrees clockwise about its centre. */
export interface RotatedBox extends Box {
  rotation?: number;
}

/** An angle in degrees brought into [0, 360) (−0 and 360 become 0). */
export function normalizeDegrees(angle: number): number {
  const a = angle % 360;
  return a < 0 ? a + 360 : a === 0 ? 0 : a;
}

/**
 * `{x, y, width, height, rotation?}` with width and height > 0. An axis-aligned box reaching past the image is cut to
 * it; a rotated one (CVAT's convention: the box before rotation, turned clockwise about its centre) cannot be cut
 * without changing its shape, so it is kept whole when its centre is inside the image and refused otherwise.
 */
export function parseBox(geometry: Record<string, unknown>, size: ImageSize): RotatedBox {
  const rotation = geometry.rotation === undefined ? 0 : normalizeDegrees(numberAt(geometry, 'rotation'));
  if (rotation === 0) return parseAxisBox(geometry, size);
  const box = { x: numberAt(geometry, 'x'), y: numberAt(geometry, 'y'), width: numberAt(geometry, 'width'), height: numberAt(geometry, 'height') };
  if (!(box.width > 0)) throw new GeometryError(['width'], 'must be greater than 0');
  if (!(box.height > 0)) throw new GeometryError(['height'], 'must be greater than 0');
  if (!insideImage([box.x + box.width / 2, box.y + box.height / 2], size)) {
    throw new GeometryError([], `the rotated box's centre lies outside the ${size.width}×${size.height} image`);
  }
  if (!(box.width * box.height > 0)) throw new GeometryError([], 'the box has no area');
  return { ...box, rotation };
}

/** `{x, y, width, height}` with width and height > 0, cut to the image. */
function parseAxisBox(geometry: Record<string, unknown>, size: ImageSize): Box {
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
 * The envelope of an annotation's geometry, stored or read from a dataset: the axis-aligned box around what it
 * covers (a rotated box's corners, every part of a polygon, a mask's stored `bbox` or else its RLE's, an ellipse, the
 * labelled keypoints or their `bbox`, a polyline's or point set's points); null for a classification (no extent).
 */
export function geometryBox(type: string, geometry: object): Box | null {
  const g = geometry as Partial<RotatedBox> & { points?: number[][]; parts?: Point[][]; bbox?: Box; rle?: Rle } & Partial<EllipseGeometry>;
  switch (type) {
    case 'bbox':
      return g.rotation ? pointsBox(rotatedCorners(g as RotatedBox)) : { x: g.x!, y: g.y!, width: g.width!, height: g.height! };
    case 'polygon':
      if (g.parts && g.parts.length > 0) return pointsBox(g.parts.flat());
      return g.points && g.points.length > 0 ? pointsBox(g.points as Point[]) : null;
    case 'mask':
      return g.bbox ?? (g.rle ? rleBbox(g.rle) : null);
    case 'keypoints': {
      if (g.bbox) return g.bbox;
      const labelled = (g.points ?? []).filter((p) => p[2] !== 0) as unknown as Point[];
      return labelled.length > 0 ? pointsBox(labelled) : null;
    }
    case 'polyline':
    case 'points':
      return g.points && g.points.length > 0 ? pointsBox(g.points as Point[]) : null;
    case 'ellipse':
      return ellipseBox(g as EllipseGeometry);
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

/** Whether a point lies on the image (its border included). */
export const insideImage = (p: readonly number[], size: ImageSize) => p[0] >= 0 && p[1] >= 0 && p[0] <= size.width && p[1] <= size.height;

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
  if (points.every((p) => insideImage(p, size))) return points;
  const edges: Edge[] = [
    { axis: 0, limit: 0, keepBelow: false },
    { axis: 0, limit: size.width, keepBelow: true },
    { axis: 1, limit: 0, keepBelow: false },
    { axis: 1, limit: size.height, keepBelow: true },
  ];
  return edges.reduce((clipped, edge) => (clipped.length === 0 ? clipped : clipAgainst(clipped, edge)), points);
}

/** `[[x, y], ...]` of finite numbers, between `min` and MAX_POLYGON_POINTS pairs; `path` says where it is. */
function pointList(raw: unknown, path: (string | number)[], min: number, what: string): Point[] {
  if (raw === undefined) throw new GeometryError(path, 'Field required');
  if (!Array.isArray(raw)) throw new GeometryError(path, 'must be an array of [x, y] pairs');
  if (raw.length < min) throw new GeometryError(path, `${what} needs at least ${min} point${min === 1 ? '' : 's'}`);
  if (raw.length > MAX_POLYGON_POINTS) throw new GeometryError(path, `${what} may have at most ${MAX_POLYGON_POINTS} points`);
  const points: Point[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const p = raw[i];
    if (!Array.isArray(p) || p.length !== 2) throw new GeometryError([...path, i], 'must be an [x, y] pair');
    if (!isFiniteNumber(p[0])) throw new GeometryError([...path, i, 0], 'must be a finite number');
    if (!isFiniteNumber(p[1])) throw new GeometryError([...path, i, 1], 'must be a finite number');
    points[i] = [p[0], p[1]];
  }
  return points;
}

/** One ring of a polygon: at least 3 points enclosing some area, clipped to the image; null when nothing is inside. */
function polygonRing(raw: unknown, path: (string | number)[], size: ImageSize): Point[] | null {
  const points = pointList(raw, path, 3, 'a polygon');
  if (polygonArea(points) === 0) throw new GeometryError(path, 'the polygon encloses no area');
  const clipped = clipPolygon(points, size);
  return clipped.length < 3 || polygonArea(clipped) === 0 ? null : clipped;
}

/** A list of rings (`parts` or `holes`): `[[[x, y], ...], ...]`. */
function ringList(raw: unknown, key: string): unknown[] {
  if (!Array.isArray(raw)) throw new GeometryError([key], 'must be an array of polygons [[[x, y], ...], ...]');
  if (raw.length > MAX_RINGS) throw new GeometryError([key], `at most ${MAX_RINGS} ${key}`);
  return raw;
}

/** Most parts (and most holes) one polygon object may have. */
export const MAX_RINGS = 1000;

export interface PolygonGeometry {
  /** The first part (the whole polygon when it has one part). */
  points: Point[];
  /** Every part, `points` first, when the object is made of several polygons (COCO multi-polygon, CVAT groups). */
  parts?: Point[][];
  /** Holes cut out of the parts. */
  holes?: Point[][];
}

/**
 * `{points: [[x, y], ...]}` with at least 3 points enclosing some area, clipped to the image. An object made of several
 * polygons sends `parts: [[[x, y], ...], ...]` (then `points` may be left out: it is the first part) and may send
 * `holes`; parts and holes with nothing inside the image are dropped, and an object with no part left is refused.
 */
export function parsePolygon(geometry: Record<string, unknown>, size: ImageSize): PolygonGeometry {
  const outside = `the polygon lies outside the ${size.width}×${size.height} image`;
  if (geometry.parts === undefined && geometry.holes === undefined) {
    const ring = polygonRing(geometry.points, ['points'], size);
    if (!ring) throw new GeometryError(['points'], outside);
    return { points: ring };
  }
  const rawParts = geometry.parts === undefined ? [geometry.points] : ringList(geometry.parts, 'parts');
  if (rawParts.length === 0) throw new GeometryError(['parts'], 'an object needs at least one part');
  const parts = rawParts.map((raw, i) => polygonRing(raw, geometry.parts === undefined ? ['points'] : ['parts', i], size)).filter((r): r is Point[] => r !== null);
  if (parts.length === 0) throw new GeometryError([geometry.parts === undefined ? 'points' : 'parts'], outside);
  const holes = geometry.holes === undefined ? [] : ringList(geometry.holes, 'holes').map((raw, i) => polygonRing(raw, ['holes', i], size)).filter((r): r is Point[] => r !== null);
  return { points: parts[0], ...(parts.length > 1 ? { parts } : {}), ...(holes.length > 0 ? { holes } : {}) };
}

/** COCO keypoint visibility: 0 not labelled, 1 labelled but not visible, 2 visible. */
export type Visibility = 0 | 1 | 2;
export type Keypoint = [x: number, y: number, v: Visibility];

export interface KeypointsGeometry {
  points: Keypoint[];
  bbox?: Box;
}

/** Most points a keypoint skeleton may have. */
export const MAX_SKELETON_POINTS = 1000;

/** A point of a point shape: on the image, or within a pixel of its border (rounding in other tools' files), moved onto it. */
function onImage(p: Point, path: (string | number)[], size: ImageSize): Point {
  if (insideImage(p, size)) return p;
  if (p[0] >= -1 && p[1] >= -1 && p[0] <= size.width + 1 && p[1] <= size.height + 1) {
    return [Math.min(size.width, Math.max(0, p[0])), Math.min(size.height, Math.max(0, p[1]))];
  }
  throw new GeometryError(path, `the point lies outside the ${size.width}×${size.height} image`);
}

/**
 * `{points: [[x, y, v], ...], bbox?}`: an instance of a keypoint skeleton, in the order of its class's skeleton points.
 * `v` as COCO: 0 not labelled (its x and y are stored as 0), 1 labelled but not visible, 2 visible. A labelled point
 * must lie on the image; `bbox`, when sent, is an axis-aligned box cut to the image.
 */
export function parseKeypoints(geometry: Record<string, unknown>, size: ImageSize): KeypointsGeometry {
  const raw = geometry.points;
  if (raw === undefined) throw new GeometryError(['points'], 'Field required');
  if (!Array.isArray(raw)) throw new GeometryError(['points'], 'must be an array of [x, y, v] triples');
  if (raw.length < 1) throw new GeometryError(['points'], 'keypoints need at least 1 point');
  if (raw.length > MAX_SKELETON_POINTS) throw new GeometryError(['points'], `at most ${MAX_SKELETON_POINTS} keypoints`);
  const points: Keypoint[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const p = raw[i];
    if (!Array.isArray(p) || p.length !== 3) throw new GeometryError(['points', i], 'must be an [x, y, v] triple');
    const v = p[2];
    if (v !== 0 && v !== 1 && v !== 2) throw new GeometryError(['points', i, 2], 'must be 0 (not labelled), 1 (labelled, not visible) or 2 (visible)');
    if (v === 0) {
      points[i] = [0, 0, 0];
      continue;
    }
    if (!isFiniteNumber(p[0])) throw new GeometryError(['points', i, 0], 'must be a finite number');
    if (!isFiniteNumber(p[1])) throw new GeometryError(['points', i, 1], 'must be a finite number');
    const [x, y] = onImage([p[0], p[1]], ['points', i], size);
    points[i] = [x, y, v];
  }
  if (!points.some((p) => p[2] > 0)) throw new GeometryError(['points'], 'at least one keypoint must be labelled (v 1 or 2)');
  if (geometry.bbox === undefined || geometry.bbox === null) return { points };
  if (typeof geometry.bbox !== 'object' || Array.isArray(geometry.bbox)) throw new GeometryError(['bbox'], 'must be an object {x, y, width, height}');
  try {
    return { points, bbox: parseAxisBox(geometry.bbox as Record<string, unknown>, size) };
  } catch (error) {
    if (error instanceof GeometryError) throw new GeometryError(['bbox', ...error.path], error.message);
    throw error;
  }
}

/** `{points: [[x, y], ...]}`: an open path of at least 2 points (polyline) or a set of at least 1 point (points), on the image. */
export function parsePointShape(geometry: Record<string, unknown>, size: ImageSize, min: 1 | 2): { points: Point[] } {
  const points = pointList(geometry.points, ['points'], min, min === 2 ? 'a polyline' : 'a point set');
  return { points: points.map((p, i) => onImage(p, ['points', i], size)) };
}

export interface EllipseGeometry {
  cx: number;
  cy: number;
  rx: number;
  ry: number;
  /** Degrees clockwise, [0, 360). */
  rotation: number;
}

/** `{cx, cy, rx, ry, rotation?}`: radii > 0, the centre on the image, the rotation in degrees clockwise. */
export function parseEllipse(geometry: Record<string, unknown>, size: ImageSize): EllipseGeometry {
  const ellipse = {
    cx: numberAt(geometry, 'cx'),
    cy: numberAt(geometry, 'cy'),
    rx: numberAt(geometry, 'rx'),
    ry: numberAt(geometry, 'ry'),
    rotation: geometry.rotation === undefined ? 0 : normalizeDegrees(numberAt(geometry, 'rotation')),
  };
  if (!(ellipse.rx > 0)) throw new GeometryError(['rx'], 'must be greater than 0');
  if (!(ellipse.ry > 0)) throw new GeometryError(['ry'], 'must be greater than 0');
  if (!insideImage([ellipse.cx, ellipse.cy], size)) throw new GeometryError([], `the ellipse's centre lies outside the ${size.width}×${size.height} image`);
  return ellipse;
}

/** The corners of a box turned `rotation` degrees clockwise about its centre (y down), clockwise from the top left. */
export function rotatedCorners(box: RotatedBox): Point[] {
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const rad = ((box.rotation ?? 0) * Math.PI) / 180;
  const cos = Math.cos(rad);
  const sin = Math.sin(rad);
  const hw = box.width / 2;
  const hh = box.height / 2;
  return ([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]] as Point[]).map(([dx, dy]) => [cx + dx * cos - dy * sin, cy + dx * sin + dy * cos]);
}

/** The axis-aligned box around an ellipse. */
export function ellipseBox(e: EllipseGeometry): Box {
  const rad = (e.rotation * Math.PI) / 180;
  const hw = Math.hypot(e.rx * Math.cos(rad), e.ry * Math.sin(rad));
  const hh = Math.hypot(e.rx * Math.sin(rad), e.ry * Math.cos(rad));
  return { x: e.cx - hw, y: e.cy - hh, width: 2 * hw, height: 2 * hh };
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

export const ANNOTATION_TYPES = ['bbox', 'polygon', 'mask', 'classification', 'keypoints', 'polyline', 'points', 'ellipse'] as const;
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
    case 'keypoints':
      return parseKeypoints(geometry, size);
    case 'polyline':
      return parsePointShape(geometry, size, 2);
    case 'points':
      return parsePointShape(geometry, size, 1);
    case 'ellipse':
      return parseEllipse(geometry, size);
    case 'classification':
      // The class is the label; anything in the geometry would be silently lost, so it is refused.
      for (const key in geometry) throw new GeometryError([key], 'a classification has no geometry; send {}');
      return {};
  }
}
