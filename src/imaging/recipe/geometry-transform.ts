/**
 * How each geometric step moves coordinates, and how annotations follow: points and box corners through the
 * composed affine map, masks by inverse mapping (nearest neighbour), then clipped to the output; whatever keeps no
 * area inside the output is dropped.
 */
import { normalizeDegrees, polygonArea, rotatedCorners, type EllipseGeometry, type Keypoint, type RotatedBox } from '../geometry.js';
import type { Bitmap, Box } from '../rle.js';
import { IDENTITY, apply, chain, invert, rotateAbout, scale, shearAbout, translate, type Affine, type Point } from './affine.js';
import type { Size, Step, StepOf } from './steps.js';

/**
 * Every annotation shape as the recipe's steps see it. A bbox's `rotation` (degrees clockwise about its centre, the
 * box before rotation as CVAT) is absent or 0 for an axis-aligned box. A keypoints instance carries `flip`, its class
 * skeleton's left/right permutation (`flipPermutation`), which every mirroring map applies.
 */
export type AnnotationGeometry =
  | { type: 'bbox'; box: RotatedBox }
  | { type: 'polygon'; points: Point[]; parts?: Point[][]; holes?: Point[][] }
  | { type: 'mask'; mask: Bitmap; crowd?: true }
  | { type: 'classification' }
  | { type: 'keypoints'; points: Keypoint[]; bbox?: Box; flip?: number[] }
  | { type: 'polyline'; points: Point[] }
  | { type: 'points'; points: Point[] }
  | { type: 'ellipse'; ellipse: EllipseGeometry };

/**
 * An annotation as the recipe's steps see it; callers may carry more fields (ids, attribute values), which are copied
 * through unchanged. `group_id` ties the shapes of one object (a polyline cut in pieces by a crop gets one).
 */
export interface RecipeAnnotation {
  class_name: string;
  geometry: AnnotationGeometry;
  group_id?: number | null;
}

/** Stored-pixel → upright map for an EXIF orientation of an image stored as width × height. */
export function orientationMap(orientation: number, width: number, height: number): Affine {
  switch (orientation) {
    case 2: return { a: -1, b: 0, c: 0, d: 1, e: width, f: 0 };
    case 3: return { a: -1, b: 0, c: 0, d: -1, e: width, f: height };
    case 4: return { a: 1, b: 0, c: 0, d: -1, e: 0, f: height };
    case 5: return { a: 0, b: 1, c: 1, d: 0, e: 0, f: 0 };
    case 6: return { a: 0, b: -1, c: 1, d: 0, e: height, f: 0 };
    case 7: return { a: 0, b: -1, c: -1, d: 0, e: height, f: width };
    case 8: return { a: 0, b: 1, c: -1, d: 0, e: 0, f: width };
    default: return IDENTITY;
  }
}

export const swapsSides = (orientation: number) => orientation >= 5 && orientation <= 8;

/** The map and canvas size after one step, given the canvas before it. Pixel-only steps are the identity. */
export function stepGeometry(step: Step, size: Size): { map: Affine; size: Size } {
  const { width: w, height: h } = size;
  switch (step.op) {
    case 'strip_orientation': {
      // `size` is the upright size; the stored image has it swapped for quarter-turn orientations.
      const stored = swapsSides(step.orientation) ? { width: h, height: w } : size;
      return { map: invert(orientationMap(step.orientation, stored.width, stored.height)), size: stored };
    }
    case 'static_crop':
    case 'tile':
      return { map: translate(-step.x, -step.y), size: { width: step.width, height: step.height } };
    case 'resize':
      return {
        map: chain(scale(step.scale_x, step.scale_y), translate(step.pad_left - step.crop_left, step.pad_top - step.crop_top)),
        size: { width: step.width, height: step.height },
      };
    case 'flip':
      return {
        map: step.axis === 'horizontal' ? { a: -1, b: 0, c: 0, d: 1, e: w, f: 0 } : { a: 1, b: 0, c: 0, d: -1, e: 0, f: h },
        size,
      };
    case 'rotate_90':
      if (step.turn === 'cw') return { map: { a: 0, b: -1, c: 1, d: 0, e: h, f: 0 }, size: { width: h, height: w } };
      if (step.turn === 'ccw') return { map: { a: 0, b: 1, c: -1, d: 0, e: 0, f: w }, size: { width: h, height: w } };
      return { map: { a: -1, b: 0, c: 0, d: -1, e: w, f: h }, size };
    case 'crop_zoom':
      return { map: chain(translate(-step.x, -step.y), scale(w / step.width, h / step.height)), size };
    case 'rotate':
      return { map: rotateAbout(step.degrees, w / 2, h / 2), size };
    case 'shear':
      return { map: shearAbout(step.horizontal_degrees, step.vertical_degrees, w / 2, h / 2), size };
    default:
      return { map: IDENTITY, size };
  }
}

const GEOMETRIC_OPS = new Set<Step['op']>(['auto_orient', 'strip_orientation', 'static_crop', 'tile', 'resize', 'flip', 'rotate_90', 'crop_zoom', 'rotate', 'shear', 'mosaic']);

/** Steps that move pixels (and so annotations); the rest change pixel values only. */
export const isGeometric = (step: Step) => GEOMETRIC_OPS.has(step.op);

/** The composed map from the annotation frame (upright source) to an output, and the output size. */
export function composeGeometry(steps: readonly Step[], source: Size): { map: Affine; size: Size } {
  let map = IDENTITY;
  let size = source;
  for (const step of steps) {
    if (step.op === 'mosaic') break; // a mosaic places each source by its own map; see mosaic.ts
    const next = stepGeometry(step, size);
    map = chain(map, next.map);
    size = next.size;
  }
  return { map, size };
}

/**
 * The stages whose outlines bound the pixels: up to the resize's scaling (the scaled image; anything a crop or tile
 * cut away is gone), then the letterbox/fill offset and every augmentation move, which are rendered as one affine
 * over the scaled image. Annotations are clipped at the end of each stage.
 */
export function geometryStages(steps: readonly Step[], source: Size): { map: Affine; size: Size }[] {
  const geometric = steps.filter((s) => isGeometric(s) && s.op !== 'mosaic');
  const at = geometric.findIndex((s) => s.op === 'resize');
  const boundary = at >= 0 ? at : geometric.findIndex((s) => AUGMENTATION_OPS.has(s.op));
  if (boundary < 0) return [composeGeometry(geometric, source)];
  const first = composeGeometry(geometric.slice(0, boundary), source);
  const rest = geometric.slice(boundary);
  if (at < 0) return [first, composeGeometry(rest, first.size)];
  const resize = rest[0] as StepOf<'resize'>;
  const scaled = { width: resize.scaled_width, height: resize.scaled_height };
  const offset = translate(resize.pad_left - resize.crop_left, resize.pad_top - resize.crop_top);
  const after = composeGeometry(rest.slice(1), { width: resize.width, height: resize.height });
  return [
    { map: chain(first.map, scale(resize.scale_x, resize.scale_y)), size: scaled },
    { map: chain(offset, after.map), size: after.size },
  ];
}

const AUGMENTATION_OPS = new Set<Step['op']>(['flip', 'rotate_90', 'crop_zoom', 'rotate', 'shear']);

/** Annotations carried through every geometric step, clipped where the pixels are cut. */
export function transformThrough<A extends RecipeAnnotation>(annotations: readonly A[], steps: readonly Step[], source: Size): A[] {
  let current = [...annotations];
  for (const stage of geometryStages(steps, source)) current = transformAnnotations(current, stage.map, stage.size);
  return current;
}

/** Annotations after class remapping/dropping. */
export function mapClasses<A extends RecipeAnnotation>(annotations: readonly A[], remap: Record<string, string>, drop: readonly string[]): A[] {
  const dropped = new Set(drop);
  return annotations
    .filter((a) => !dropped.has(a.class_name))
    .map((a) => (a.class_name in remap ? { ...a, class_name: remap[a.class_name] } : a));
}

/**
 * Every annotation moved through `map` into a `size` output; those left with nothing inside it are dropped. A polyline
 * a crop cuts into several pieces becomes several polylines of one group: its own group id, or when it has none a new
 * one (above every group id of these annotations), so the pieces stay one object.
 */
export function transformAnnotations<A extends RecipeAnnotation>(annotations: readonly A[], map: Affine, size: Size): A[] {
  const out: A[] = [];
  let nextGroup = annotations.reduce((max, a) => Math.max(max, a.group_id ?? 0), 0) + 1;
  for (const annotation of annotations) {
    const geometries = transformShape(annotation.geometry, map, size);
    if (geometries.length === 1) out.push({ ...annotation, geometry: geometries[0] });
    else if (geometries.length > 1) {
      const group_id = annotation.group_id ?? nextGroup++;
      for (const geometry of geometries) out.push({ ...annotation, geometry, group_id });
    }
  }
  return out;
}

const MIN_AREA = 1e-6;
/** Two mapped directions closer to perpendicular than this (cosine) still make a rectangle. */
const RIGHT_ANGLE = 1e-9;

/** Whether `map` mirrors (a flip, or a quarter turn composed with one): left and right keypoints change places. */
export const mirrors = (map: Affine) => map.a * map.d - map.b * map.c < 0;

/** One annotation's geometry after `map`, clipped to `size`; null when nothing of it is left (see transformShape). */
export function transformGeometry(geometry: AnnotationGeometry, map: Affine, size: Size): AnnotationGeometry | null {
  return transformShape(geometry, map, size)[0] ?? null;
}

/**
 * One geometry after `map`, clipped to the `size` output: none when nothing is left, several only for a polyline
 * cut into pieces.
 * - bbox: an axis-aligned box stays axis-aligned (the box around its mapped corners, clipped; what detectors train
 *   on). A rotated box stays a rotated box (centre mapped, angle turned with the map, mirrored by a flip, sides
 *   scaled) while the map keeps its sides perpendicular (flips, rotations, uniform or axis-aligned scaling of an
 *   axis-aligned side); under a shear or a non-uniform scale across its sides it becomes the polygon of its mapped
 *   corners. A rotated box is kept whole while its centre is inside the output (as the API stores one), else dropped.
 * - polygon: every part and hole mapped and clipped; parts and holes with no area left are dropped.
 * - mask: resampled (nearest neighbour).
 * - keypoints: labelled points mapped; one that leaves the output becomes not labelled ([0, 0, 0]); a mirroring map
 *   swaps left/right points by the skeleton's flip pairs; the optional box follows as an axis-aligned box. Dropped
 *   when no point stays labelled.
 * - polyline: mapped and clipped to the output; each piece inside is kept (see transformAnnotations).
 * - points: mapped; points outside the output are dropped, and the shape when none is left.
 * - ellipse: the exact image of the ellipse under the map (an affine map takes an ellipse to an ellipse: its new
 *   radii and angle are the singular values and left singular vector of the mapped axes), kept whole while its
 *   centre is inside the output.
 * - classification: unchanged.
 */
export function transformShape(geometry: AnnotationGeometry, map: Affine, size: Size): AnnotationGeometry[] {
  switch (geometry.type) {
    case 'classification':
      return [geometry];
    case 'bbox': {
      if (!geometry.box.rotation) {
        const box = transformBox(geometry.box, map, size);
        return box ? [{ type: 'bbox', box }] : [];
      }
      const rotated = transformRotatedBox(geometry.box, map);
      if (rotated) return insideOutput([rotated.x + rotated.width / 2, rotated.y + rotated.height / 2], size) ? [{ type: 'bbox', box: rotated }] : [];
      const points = clipPolygon(rotatedCorners(geometry.box).map((p) => apply(map, p)), size);
      return points.length >= 3 && polygonArea(points) > MIN_AREA ? [{ type: 'polygon', points }] : [];
    }
    case 'polygon': {
      const ring = (r: readonly Point[]) => {
        const points = clipPolygon(r.map((p) => apply(map, p)), size);
        return points.length >= 3 && polygonArea(points) > MIN_AREA ? points : null;
      };
      const parts = (geometry.parts ?? [geometry.points]).map(ring).filter((r): r is Point[] => r !== null);
      if (parts.length === 0) return [];
      const holes = (geometry.holes ?? []).map(ring).filter((r): r is Point[] => r !== null);
      return [{ type: 'polygon', points: parts[0], ...(parts.length > 1 ? { parts } : {}), ...(holes.length > 0 ? { holes } : {}) }];
    }
    case 'mask': {
      const mask = transformMask(geometry.mask, map, size);
      return mask.data.includes(1) ? [{ ...geometry, mask }] : [];
    }
    case 'keypoints':
      return transformKeypoints(geometry, map, size);
    case 'polyline':
      return clipPolyline(geometry.points.map((p) => apply(map, p)), size).map((points) => ({ type: 'polyline', points }));
    case 'points': {
      const points = geometry.points.map((p) => apply(map, p)).filter((p) => insideOutput(p, size));
      return points.length > 0 ? [{ type: 'points', points }] : [];
    }
    case 'ellipse': {
      const ellipse = transformEllipse(geometry.ellipse, map);
      return insideOutput([ellipse.cx, ellipse.cy], size) ? [{ type: 'ellipse', ellipse }] : [];
    }
  }
}

const insideOutput = (p: readonly number[], size: Size) => p[0] >= 0 && p[1] >= 0 && p[0] <= size.width && p[1] <= size.height;

/** The mapped direction of a unit vector at `degrees` (the linear part of the map only). */
function mappedAxis(map: Affine, degrees: number): Point {
  const r = (degrees * Math.PI) / 180;
  return [map.a * Math.cos(r) + map.b * Math.sin(r), map.c * Math.cos(r) + map.d * Math.sin(r)];
}

const angleOf = (v: Point) => normalizeDegrees((Math.atan2(v[1], v[0]) * 180) / Math.PI);

/**
 * A rotated box after `map` when the map keeps its sides perpendicular: the width side's mapped direction gives the
 * new angle (a flip mirrors it: 180° − θ), each side scales by its axis' stretch. Null when the map skews the box.
 */
export function transformRotatedBox(box: RotatedBox, map: Affine): RotatedBox | null {
  const rotation = box.rotation ?? 0;
  const u = mappedAxis(map, rotation);
  const v = mappedAxis(map, rotation + 90);
  const lu = Math.hypot(u[0], u[1]);
  const lv = Math.hypot(v[0], v[1]);
  if (Math.abs(u[0] * v[0] + u[1] * v[1]) > RIGHT_ANGLE * lu * lv) return null;
  const [cx, cy] = apply(map, [box.x + box.width / 2, box.y + box.height / 2]);
  const width = box.width * lu;
  const height = box.height * lv;
  return { x: cx - width / 2, y: cy - height / 2, width, height, rotation: angleOf(u) };
}

/**
 * The ellipse after `map`: its points are c + A·(cos t, sin t) with A = L·R(θ)·diag(rx, ry) (L the map's linear
 * part); A's singular values are the new radii and its first left singular vector the new major direction.
 */
export function transformEllipse(e: EllipseGeometry, map: Affine): EllipseGeometry {
  const u = mappedAxis(map, e.rotation);
  const v = mappedAxis(map, e.rotation + 90);
  // A = [u·rx, v·ry] as columns.
  const a = u[0] * e.rx;
  const b = v[0] * e.ry;
  const c = u[1] * e.rx;
  const d = v[1] * e.ry;
  // A·Aᵀ = [[p, q], [q, r]]: its eigenvalues are the squared radii, its first eigenvector the major axis.
  const p = a * a + b * b;
  const q = a * c + b * d;
  const r = c * c + d * d;
  const mean = (p + r) / 2;
  const spread = Math.hypot((p - r) / 2, q);
  const major = Math.sqrt(mean + spread);
  const minor = Math.sqrt(Math.max(0, mean - spread));
  const [cx, cy] = apply(map, [e.cx, e.cy]);
  // Angle of the major eigenvector: ½·atan2(2q, p − r).
  const rotation = normalizeDegrees((Math.atan2(2 * q, p - r) * 90) / Math.PI);
  // A similarity (rotation, flip, uniform scale) keeps the axes: rx stays rx and the angle turns with the map.
  if (isSimilarity(map)) return { cx, cy, rx: Math.hypot(u[0], u[1]) * e.rx, ry: Math.hypot(v[0], v[1]) * e.ry, rotation: angleOf(u) };
  const rad = (rotation * Math.PI) / 180;
  const along = Math.abs(Math.cos(rad) * u[0] + Math.sin(rad) * u[1]);
  const across = Math.abs(-Math.sin(rad) * u[0] + Math.cos(rad) * u[1]);
  // rx stays the radius of the side the old rx axis leans to (the major one when its mapped direction is nearer it),
  // its angle the one of the two opposite directions nearer the mapped rx axis.
  const [rx, ry, angle] = along >= across ? [major, minor, rotation] : [minor, major, rotation - 90];
  const turn = Math.abs(((angle - angleOf(u) + 540) % 360) - 180) > 90 ? angle + 180 : angle;
  return { cx, cy, rx, ry, rotation: normalizeDegrees(turn) };
}

const isSimilarity = (m: Affine) => {
  const scale = m.a * m.a + m.c * m.c;
  return Math.abs(scale - (m.b * m.b + m.d * m.d)) <= 1e-12 * scale && Math.abs(m.a * m.b + m.c * m.d) <= 1e-12 * scale;
};

function transformKeypoints(geometry: Extract<AnnotationGeometry, { type: 'keypoints' }>, map: Affine, size: Size): AnnotationGeometry[] {
  const moved = geometry.points.map(([x, y, v]): Keypoint => {
    if (v === 0) return [0, 0, 0];
    const [px, py] = apply(map, [x, y]);
    return insideOutput([px, py], size) ? [px, py, v] : [0, 0, 0];
  });
  const order = geometry.flip && mirrors(map) ? geometry.flip : null;
  // Point i of the mirrored instance is what was point order[i] (the skeleton's left/right partner).
  const points = order ? moved.map((_, i) => moved[order[i] ?? i] ?? [0, 0, 0]) : moved;
  if (!points.some((p) => p[2] > 0)) return [];
  const bbox = geometry.bbox ? transformBox(geometry.bbox, map, size) : null;
  return [{ type: 'keypoints', points, ...(bbox ? { bbox } : {}), ...(geometry.flip ? { flip: geometry.flip } : {}) }];
}

/** An open path clipped to [0, width] × [0, height] (Liang–Barsky on each segment): the pieces inside, in order. */
export function clipPolyline(points: readonly Point[], size: Size): Point[][] {
  const pieces: Point[][] = [];
  let current: Point[] = [];
  const close = () => {
    if (current.length >= 2 && pathLength(current) > MIN_AREA) pieces.push(current);
    current = [];
  };
  for (let i = 0; i + 1 < points.length; i++) {
    const segment = clipSegment(points[i], points[i + 1], size);
    if (!segment) {
      close();
      continue;
    }
    const [from, to] = segment;
    const last = current.at(-1);
    if (!last || last[0] !== from[0] || last[1] !== from[1]) {
      close();
      current.push(from);
    }
    current.push(to);
    // The segment left the output before its end: the path leaves here.
    if (to[0] !== points[i + 1][0] || to[1] !== points[i + 1][1]) close();
  }
  close();
  return pieces;
}

function pathLength(points: readonly Point[]): number {
  let length = 0;
  for (let i = 1; i < points.length; i++) length += Math.hypot(points[i][0] - points[i - 1][0], points[i][1] - points[i - 1][1]);
  return length;
}

function clipSegment(p: Point, q: Point, size: Size): [Point, Point] | null {
  const dx = q[0] - p[0];
  const dy = q[1] - p[1];
  let t0 = 0;
  let t1 = 1;
  const checks: [number, number][] = [[-dx, p[0]], [dx, size.width - p[0]], [-dy, p[1]], [dy, size.height - p[1]]];
  for (const [den, num] of checks) {
    if (den === 0) {
      if (num < 0) return null;
    } else {
      const t = num / den;
      if (den < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
    }
  }
  if (t0 > t1) return null;
  const at = (t: number): Point => (t === 0 ? [p[0], p[1]] : t === 1 ? [q[0], q[1]] : [p[0] + t * dx, p[1] + t * dy]);
  return [at(t0), at(t1)];
}

/** The bounding box of the box's four mapped corners, clipped to the output; null when nothing is left inside. */
export function transformBox(box: Box, map: Affine, size: Size): Box | null {
  const corners = [
    apply(map, [box.x, box.y]),
    apply(map, [box.x + box.width, box.y]),
    apply(map, [box.x, box.y + box.height]),
    apply(map, [box.x + box.width, box.y + box.height]),
  ];
  const x0 = Math.max(0, Math.min(...corners.map((p) => p[0])));
  const y0 = Math.max(0, Math.min(...corners.map((p) => p[1])));
  const x1 = Math.min(size.width, Math.max(...corners.map((p) => p[0])));
  const y1 = Math.min(size.height, Math.max(...corners.map((p) => p[1])));
  if (x1 - x0 <= MIN_AREA || y1 - y0 <= MIN_AREA) return null;
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** Sutherland–Hodgman clipping of a polygon to [0, width] × [0, height]. */
export function clipPolygon(points: readonly Point[], size: Size): Point[] {
  const edges: [inside: (p: Point) => boolean, cross: (p: Point, q: Point) => Point][] = [
    [(p) => p[0] >= 0, (p, q) => lerpAt(p, q, 0, 0)],
    [(p) => p[0] <= size.width, (p, q) => lerpAt(p, q, 0, size.width)],
    [(p) => p[1] >= 0, (p, q) => lerpAt(p, q, 1, 0)],
    [(p) => p[1] <= size.height, (p, q) => lerpAt(p, q, 1, size.height)],
  ];
  let result: Point[] = [...points];
  for (const [inside, cross] of edges) {
    const input = result;
    result = [];
    for (let i = 0; i < input.length; i++) {
      const current = input[i];
      const previous = input[(i + input.length - 1) % input.length];
      if (inside(current)) {
        if (!inside(previous)) result.push(cross(previous, current));
        result.push(current);
      } else if (inside(previous)) {
        result.push(cross(previous, current));
      }
    }
    if (result.length === 0) break;
  }
  return result;
}

function lerpAt(p: Point, q: Point, axis: 0 | 1, value: number): Point {
  const t = (value - p[axis]) / (q[axis] - p[axis]);
  const out: Point = [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
  out[axis] = value;
  return out;
}

/** Each output pixel takes the source pixel under its centre mapped back through `map` (nearest neighbour). */
export function transformMask(mask: Bitmap, map: Affine, size: Size): Bitmap {
  const inverse = invert(map);
  const { width, height } = size;
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    // Source position of the centre of (0, y); each step right adds (inverse.a, inverse.c).
    let sx = inverse.a * 0.5 + inverse.b * (y + 0.5) + inverse.e;
    let sy = inverse.c * 0.5 + inverse.d * (y + 0.5) + inverse.f;
    for (let x = 0; x < width; x++, sx += inverse.a, sy += inverse.c) {
      const ix = Math.floor(sx);
      const iy = Math.floor(sy);
      if (ix >= 0 && iy >= 0 && ix < mask.width && iy < mask.height && mask.data[iy * mask.width + ix]) data[y * width + x] = 1;
    }
  }
  return { width, height, data };
}
