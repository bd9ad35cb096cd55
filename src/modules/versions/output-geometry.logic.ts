/**
 * Annotation geometry between its stored form (the annotations API: `{x, y, width, height, rotation?}`,
 * `{points, parts?, holes?}`, `{rle}`, `{points: [[x, y, v]], bbox?}`, `{cx, cy, rx, ry, rotation}`, `{}`) and the
 * recipe's tagged form, in both directions, with the annotation's attribute values and group id carried unchanged.
 * Outputs store masks as RLE with their bbox.
 */
import type { AnnotationGeometry, RecipeAnnotation } from '../../imaging/recipe/index.js';
import { type Box, type EllipseGeometry, type Keypoint, type Point } from '../../imaging/geometry.js';
import { flipPermutation, type Skeleton } from '../../imaging/class-specs.js';
import { decodeRle, encodeRle, rleBbox, type Rle } from '../../imaging/rle.js';

export interface FrozenAnnotation {
  class_name: string;
  annotation_type: string;
  geometry: Record<string, unknown>;
  /** Attribute values `{name: value}`; absent when the annotation has none. */
  attributes?: Record<string, unknown>;
  group_id?: number | null;
}

/** A recipe annotation with what the steps copy through untouched. */
export interface CarriedAnnotation extends RecipeAnnotation {
  attributes?: Record<string, unknown>;
}

/**
 * The recipe's form of a frozen annotation; `flips` gives a keypoint class's left/right permutation (its skeleton's
 * flip pairs), which mirroring steps apply.
 */
export function toRecipeAnnotation(annotation: FrozenAnnotation, flips?: ReadonlyMap<string, number[]>): CarriedAnnotation | null {
  const g = annotation.geometry;
  let geometry: AnnotationGeometry;
  switch (annotation.annotation_type) {
    case 'bbox': {
      const box = { x: Number(g.x), y: Number(g.y), width: Number(g.width), height: Number(g.height) };
      geometry = { type: 'bbox', box: g.rotation ? { ...box, rotation: Number(g.rotation) } : box };
      break;
    }
    case 'polygon':
      geometry = {
        type: 'polygon',
        points: g.points as Point[],
        ...(Array.isArray(g.parts) && g.parts.length > 1 ? { parts: g.parts as Point[][] } : {}),
        ...(Array.isArray(g.holes) && g.holes.length > 0 ? { holes: g.holes as Point[][] } : {}),
      };
      break;
    case 'mask':
      geometry = { type: 'mask', mask: decodeRle(g.rle as Rle), ...(g.crowd === true ? { crowd: true as const } : {}) };
      break;
    case 'keypoints': {
      const flip = flips?.get(annotation.class_name);
      geometry = { type: 'keypoints', points: g.points as Keypoint[], ...(g.bbox ? { bbox: g.bbox as Box } : {}), ...(flip ? { flip } : {}) };
      break;
    }
    case 'polyline':
    case 'points':
      geometry = { type: annotation.annotation_type, points: g.points as Point[] };
      break;
    case 'ellipse':
      geometry = { type: 'ellipse', ellipse: { cx: Number(g.cx), cy: Number(g.cy), rx: Number(g.rx), ry: Number(g.ry), rotation: Number(g.rotation ?? 0) } };
      break;
    case 'classification':
      geometry = { type: 'classification' };
      break;
    default:
      return null;
  }
  return {
    class_name: annotation.class_name,
    geometry,
    ...(annotation.attributes && Object.keys(annotation.attributes).length > 0 ? { attributes: annotation.attributes } : {}),
    ...(annotation.group_id != null ? { group_id: annotation.group_id } : {}),
  };
}

/** Per class with a skeleton, the keypoint order a mirroring step applies (from its `flip_pairs`). */
export function flipOrders(classes: readonly { name: string; skeleton: string | null }[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const c of classes) {
    if (!c.skeleton) continue;
    const skeleton = JSON.parse(c.skeleton) as Skeleton;
    out.set(c.name, flipPermutation(skeleton, skeleton.points.length));
  }
  return out;
}

const round = (v: number) => Math.round(v * 1000) / 1000;
const roundPoints = (points: readonly Point[]) => points.map(([x, y]) => [round(x), round(y)]);
const roundBox = ({ x, y, width, height }: Box) => ({ x: round(x), y: round(y), width: round(width), height: round(height) });

export function fromRecipeGeometry(geometry: AnnotationGeometry): { annotation_type: string; geometry: Record<string, unknown> } {
  switch (geometry.type) {
    case 'bbox': {
      const rotation = geometry.box.rotation ? round(geometry.box.rotation) % 360 : 0;
      return { annotation_type: 'bbox', geometry: { ...roundBox(geometry.box), ...(rotation ? { rotation } : {}) } };
    }
    case 'polygon':
      return {
        annotation_type: 'polygon',
        geometry: {
          points: roundPoints(geometry.points),
          ...(geometry.parts ? { parts: geometry.parts.map(roundPoints) } : {}),
          ...(geometry.holes ? { holes: geometry.holes.map(roundPoints) } : {}),
        },
      };
    case 'mask': {
      const rle = encodeRle(geometry.mask);
      return { annotation_type: 'mask', geometry: { rle, bbox: rleBbox(rle), ...(geometry.crowd ? { crowd: true } : {}) } };
    }
    case 'keypoints':
      return {
        annotation_type: 'keypoints',
        geometry: {
          points: geometry.points.map(([x, y, v]) => (v === 0 ? [0, 0, 0] : [round(x), round(y), v])),
          ...(geometry.bbox ? { bbox: roundBox(geometry.bbox) } : {}),
        },
      };
    case 'polyline':
    case 'points':
      return { annotation_type: geometry.type, geometry: { points: roundPoints(geometry.points) } };
    case 'ellipse': {
      const e: EllipseGeometry = geometry.ellipse;
      return { annotation_type: 'ellipse', geometry: { cx: round(e.cx), cy: round(e.cy), rx: round(e.rx), ry: round(e.ry), rotation: round(e.rotation) % 360 } };
    }
    default:
      return { annotation_type: 'classification', geometry: {} };
  }
}

/** The stored columns of an output annotation's attribute values and group id (null when it has none). */
export function carriedColumns(annotation: CarriedAnnotation): { attributes: string | null; group_id: number | null } {
  return {
    attributes: annotation.attributes && Object.keys(annotation.attributes).length > 0 ? JSON.stringify(annotation.attributes) : null,
    group_id: annotation.group_id ?? null,
  };
}
