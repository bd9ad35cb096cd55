import { rleBbox } from '../imaging/rle.js';
import type { SyntheticShape } from './shapes.js';

export type SyntheticGeometryType = 'bbox' | 'polygon' | 'mask';

/** A shape's ground truth as the `geometry` of an annotation, in the shapes the API contract defines. */
export function shapeGeometry(shape: SyntheticShape, type: SyntheticGeometryType): Record<string, unknown> {
  switch (type) {
    case 'bbox':
      return { ...shape.bbox };
    case 'polygon':
      return { points: shape.polygon.map(([x, y]) => [x, y]) };
    case 'mask': {
      if (!shape.mask) throw new Error('this shape was generated without masks (masks: false)');
      return { rle: shape.mask, bbox: rleBbox(shape.mask) };
    }
  }
}
