import type { Annotation, BboxGeometry, MaskGeometry, PolygonGeometry } from '../types.js';
import type { Bitmap } from './mask.js';
import type { Rect } from './spatial-index.js';

export type Point = [number, number];

export function boundsOf(ann: Annotation): Rect | null {
  switch (ann.annotation_type) {
    case 'bbox': {
      const g = ann.geometry as BboxGeometry;
      return { x: g.x, y: g.y, width: g.width, height: g.height };
    }
    case 'polygon': {
      const pts = (ann.geometry as PolygonGeometry).points;
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const [x, y] of pts) {
        x0 = Math.min(x0, x);
        y0 = Math.min(y0, y);
        x1 = Math.max(x1, x);
        y1 = Math.max(y1, y);
      }
      return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
    }
    case 'mask':
      return (ann.geometry as MaskGeometry).bbox ?? null;
    default:
      return null;
  }
}

export function pointInPolygon(x: number, y: number, pts: Point[]): boolean {
  let inside = false;
  for (let i = 0, j = pts.length - 1; i < pts.length; j = i++) {
    const [xi, yi] = pts[i];
    const [xj, yj] = pts[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Whether image point (x, y) falls on the shape; `slack` (image pixels) makes thin boxes clickable. */
export function hits(ann: Annotation, bounds: Rect, bitmap: Bitmap | undefined, x: number, y: number, slack: number): boolean {
  if (ann.annotation_type === 'bbox') {
    return x >= bounds.x - slack && x <= bounds.x + bounds.width + slack && y >= bounds.y - slack && y <= bounds.y + bounds.height + slack;
  }
  if (ann.annotation_type === 'polygon') return pointInPolygon(x, y, (ann.geometry as PolygonGeometry).points);
  if (ann.annotation_type === 'mask' && bitmap) {
    const px = Math.floor(x), py = Math.floor(y);
    return px >= 0 && py >= 0 && px < bitmap.width && py < bitmap.height && bitmap.data[py * bitmap.width + px] === 1;
  }
  return false;
}

/** Edge flags of the eight resize handles of a box: which edges a handle drags. */
export const BOX_HANDLES: { l: boolean; r: boolean; t: boolean; b: boolean }[] = [
  { l: true, r: false, t: true, b: false },
  { l: false, r: false, t: true, b: false },
  { l: false, r: true, t: true, b: false },
  { l: false, r: true, t: false, b: false },
  { l: false, r: true, t: false, b: true },
  { l: false, r: false, t: false, b: true },
  { l: true, r: false, t: false, b: true },
  { l: true, r: false, t: false, b: false },
];

export function boxHandlePoints(b: Rect): Point[] {
  return BOX_HANDLES.map((h) => [
    h.l ? b.x : h.r ? b.x + b.width : b.x + b.width / 2,
    h.t ? b.y : h.b ? b.y + b.height : b.y + b.height / 2,
  ]);
}

export function handlePoints(ann: Annotation, bounds: Rect): Point[] {
  if (ann.annotation_type === 'bbox') return boxHandlePoints(bounds);
  if (ann.annotation_type === 'polygon') return (ann.geometry as PolygonGeometry).points;
  return [];
}

const round = (v: number) => Math.round(v * 100) / 100;

export function clampBox(x0: number, y0: number, x1: number, y1: number, w: number, h: number): BboxGeometry {
  const ax = Math.max(0, Math.min(w, Math.min(x0, x1))), bx = Math.max(0, Math.min(w, Math.max(x0, x1)));
  const ay = Math.max(0, Math.min(h, Math.min(y0, y1))), by = Math.max(0, Math.min(h, Math.max(y0, y1)));
  return { x: round(ax), y: round(ay), width: round(bx - ax), height: round(by - ay) };
}

export function clampPoints(pts: Point[], w: number, h: number): Point[] {
  return pts.map(([x, y]) => [round(Math.max(0, Math.min(w, x))), round(Math.max(0, Math.min(h, y)))]);
}

/** The geometry moved by (dx, dy), kept inside the image. */
export function translate(ann: Annotation, dx: number, dy: number, w: number, h: number): Annotation['geometry'] {
  if (ann.annotation_type === 'bbox') {
    const g = ann.geometry as BboxGeometry;
    const x = Math.max(0, Math.min(w - g.width, g.x + dx)), y = Math.max(0, Math.min(h - g.height, g.y + dy));
    return { x: round(x), y: round(y), width: g.width, height: g.height };
  }
  if (ann.annotation_type === 'polygon') {
    return { points: clampPoints((ann.geometry as PolygonGeometry).points.map(([x, y]) => [x + dx, y + dy]), w, h) };
  }
  return ann.geometry;
}
