/** The kinds of shape the generator draws. Circles and ellipses are drawn as fine polygons so that every label is exact. */
export type ShapeKind = 'rectangle' | 'circle' | 'ellipse' | 'triangle' | 'hexagon';

export interface ShapeClass {
  readonly name: string;
  readonly kind: ShapeKind;
  /** `#rrggbb`, the colour the class is drawn in (each shape varies it slightly) and the one a demo gives the class. */
  readonly color: string;
}

/**
 * The fixed class list: each class is one kind of shape in one colour, so a detector (or a person) can tell them apart
 * by shape and by colour. The order is stable: datasets made from the same seed use the same class indices.
 */
export const SHAPE_CLASSES: readonly ShapeClass[] = Object.freeze([
  { name: 'red-rectangle', kind: 'rectangle', color: '#e53935' },
  { name: 'green-circle', kind: 'circle', color: '#43a047' },
  { name: 'blue-triangle', kind: 'triangle', color: '#1e88e5' },
  { name: 'yellow-ellipse', kind: 'ellipse', color: '#fdd835' },
  { name: 'purple-hexagon', kind: 'hexagon', color: '#8e24aa' },
]);

export function rgbOf(color: string): [number, number, number] {
  const value = Number.parseInt(color.slice(1), 16);
  return [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
}

export function hexOf([r, g, b]: readonly [number, number, number]): string {
  return `#${((1 << 24) | (r << 16) | (g << 8) | b).toString(16).slice(1)}`;
}
