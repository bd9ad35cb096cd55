/**
 * How each geometric step moves coordinates, and how annotations follow: points and box corners through the
 * composed affine map, masks by inverse mapping (nearest neighbour), then clipped to the output; whatever keeps no
 * area inside the output is dropped.
 */
import { polygonArea } from '../geometry.js';
import type { Bitmap, Box } from '../rle.js';
import { IDENTITY, apply, chain, invert, rotateAbout, scale, shearAbout, translate, type Affine, type Point } from './affine.js';
import type { Size, Step, StepOf } from './steps.js';

export type AnnotationGeometry =
  | { type: 'bbox'; box: Box }
  | { type: 'polygon'; points: Point[] }
  | { type: 'mask'; mask: Bitmap }
  | { type: 'classification' };

/** An annotation as the recipe's steps see it; callers may carry more fields (ids), which are copied through. */
export interface RecipeAnnotation {
  class_name: string;
  geometry: AnnotationGeometry;
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

/** Every annotation moved through `map` into a `size` output; those left with no area inside it are dropped. */
export function transformAnnotations<A extends RecipeAnnotation>(annotations: readonly A[], map: Affine, size: Size): A[] {
  const out: A[] = [];
  for (const annotation of annotations) {
    const geometry = transformGeometry(annotation.geometry, map, size);
    if (geometry) out.push({ ...annotation, geometry });
  }
  return out;
}

const MIN_AREA = 1e-6;

export function transformGeometry(geometry: AnnotationGeometry, map: Affine, size: Size): AnnotationGeometry | null {
  switch (geometry.type) {
    case 'classification':
      return geometry;
    case 'bbox': {
      const box = transformBox(geometry.box, map, size);
      return box ? { type: 'bbox', box } : null;
    }
    case 'polygon': {
      const points = clipPolygon(geometry.points.map((p) => apply(map, p)), size);
      return points.length >= 3 && polygonArea(points) > MIN_AREA ? { type: 'polygon', points } : null;
    }
    case 'mask': {
      const mask = transformMask(geometry.mask, map, size);
      return mask.data.includes(1) ? { type: 'mask', mask } : null;
    }
  }
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
