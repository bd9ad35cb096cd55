/**
 * Annotation geometry between its stored form (the annotations API: `{x, y, width, height}`, `{points}`,
 * `{rle}`, `{}`) and the recipe's tagged form, in both directions. Outputs store masks as RLE with their bbox.
 */
import type { AnnotationGeometry, RecipeAnnotation } from '../../imaging/recipe/index.js';
import { decodeRle, encodeRle, rleBbox, type Rle } from '../../imaging/rle.js';

export interface FrozenAnnotation {
  class_name: string;
  annotation_type: string;
  geometry: Record<string, unknown>;
}

export function toRecipeAnnotation(annotation: FrozenAnnotation): RecipeAnnotation | null {
  const g = annotation.geometry;
  let geometry: AnnotationGeometry;
  switch (annotation.annotation_type) {
    case 'bbox':
      geometry = { type: 'bbox', box: { x: Number(g.x), y: Number(g.y), width: Number(g.width), height: Number(g.height) } };
      break;
    case 'polygon':
      geometry = { type: 'polygon', points: g.points as [number, number][] };
      break;
    case 'mask':
      geometry = { type: 'mask', mask: decodeRle(g.rle as Rle) };
      break;
    case 'classification':
      geometry = { type: 'classification' };
      break;
    default:
      return null;
  }
  return { class_name: annotation.class_name, geometry };
}

const round = (v: number) => Math.round(v * 1000) / 1000;

export function fromRecipeGeometry(geometry: AnnotationGeometry): { annotation_type: string; geometry: Record<string, unknown> } {
  switch (geometry.type) {
    case 'bbox': {
      const { x, y, width, height } = geometry.box;
      return { annotation_type: 'bbox', geometry: { x: round(x), y: round(y), width: round(width), height: round(height) } };
    }
    case 'polygon':
      return { annotation_type: 'polygon', geometry: { points: geometry.points.map(([x, y]) => [round(x), round(y)]) } };
    case 'mask': {
      const rle = encodeRle(geometry.mask);
      return { annotation_type: 'mask', geometry: { rle, bbox: rleBbox(rle) } };
    }
    default:
      return { annotation_type: 'classification', geometry: {} };
  }
}
