import type { Annotation, BboxGeometry, EllipseGeometry, KeypointsGeometry, MaskGeometry, PathGeometry, PolygonGeometry } from '../types.js';
import type { Bitmap } from './mask.js';
import type { Rect } from './spatial-index.js';

export type Point = [number, number];

export function boundsOf(ann: Annotation): Rect | null {
  switch (ann.annotation_type) {
    case 'bbox': {
      const g = ann.geometry as BboxGeometry;
      return g.rotation ? envelope(rotatedCorners(g)) : { x: g.x, y: g.y, width: g.width, height: g.height };
    }
    case 'polygon':
      return envelope(polygonParts(ann.geometry as PolygonGeometry).flat());
    case 'polyline':
    case 'points':
      return envelope((ann.geometry as PathGeometry).points);
    case 'keypoints': {
      const g = ann.geometry as KeypointsGeometry;
      const labelled: Point[] = g.points.filter((p) => p[2] > 0).map((p) => [p[0], p[1]]);
      if (g.bbox) labelled.push([g.bbox.x, g.bbox.y], [g.bbox.x + g.bbox.width, g.bbox.y + g.bbox.height]);
      return labelled.length ? envelope(labelled) : { x: 0, y: 0, width: 0, height: 0 };
    }
    case 'ellipse':
      return ellipseBounds(ann.geometry as EllipseGeometry);
    case 'mask':
      return (ann.geometry as MaskGeometry).bbox ?? null;
    default:
      return null;
  }
}

/** The smallest axis-aligned rectangle holding the points. */
export function envelope(pts: ArrayLike<readonly number[]>): Rect {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let i = 0; i < pts.length; i++) {
    const [x, y] = pts[i];
    if (x < x0) x0 = x;
    if (y < y0) y0 = y;
    if (x > x1) x1 = x;
    if (y > y1) y1 = y;
  }
  return pts.length ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : { x: 0, y: 0, width: 0, height: 0 };
}

/** Every polygon of an object: its parts, or its one outline. */
export function polygonParts(g: PolygonGeometry): Point[][] {
  return g.parts && g.parts.length ? g.parts : [g.points];
}

const RAD = Math.PI / 180;

/** (x, y) turned by `deg` degrees clockwise (y down) about (cx, cy). */
export function rotateAbout(x: number, y: number, cx: number, cy: number, deg: number): Point {
  const c = Math.cos(deg * RAD), s = Math.sin(deg * RAD);
  const dx = x - cx, dy = y - cy;
  return [cx + dx * c - dy * s, cy + dx * s + dy * c];
}

/** A box's corners after its rotation about its centre: top-left, top-right, bottom-right, bottom-left. */
export function rotatedCorners(g: BboxGeometry): Point[] {
  const cx = g.x + g.width / 2, cy = g.y + g.height / 2, r = g.rotation ?? 0;
  return ([[g.x, g.y], [g.x + g.width, g.y], [g.x + g.width, g.y + g.height], [g.x, g.y + g.height]] as Point[]).map(([x, y]) => rotateAbout(x, y, cx, cy, r));
}

export function ellipseBounds(g: EllipseGeometry): Rect {
  const c = Math.cos(g.rotation * RAD), s = Math.sin(g.rotation * RAD);
  const hw = Math.sqrt((g.rx * c) ** 2 + (g.ry * s) ** 2), hh = Math.sqrt((g.rx * s) ** 2 + (g.ry * c) ** 2);
  return { x: g.cx - hw, y: g.cy - hh, width: hw * 2, height: hh * 2 };
}

/** An angle in degrees brought into [0, 360), to a tenth of a degree. */
export function normalizeDegrees(deg: number): number {
  const d = Math.round((((deg % 360) + 360) % 360) * 10) / 10;
  return d >= 360 ? 0 : d;
}

function nearSegment(x: number, y: number, a: Point, b: Point, r: number): boolean {
  const dx = b[0] - a[0], dy = b[1] - a[1];
  const len = dx * dx + dy * dy;
  const t = len === 0 ? 0 : Math.max(0, Math.min(1, ((x - a[0]) * dx + (y - a[1]) * dy) / len));
  return Math.hypot(a[0] + t * dx - x, a[1] + t * dy - y) <= r;
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

/** Whether image point (x, y) falls on the shape; `slack` (image pixels) makes thin boxes and lines clickable. */
export function hits(ann: Annotation, bounds: Rect, bitmap: Bitmap | undefined, x: number, y: number, slack: number): boolean {
  switch (ann.annotation_type) {
    case 'bbox': {
      const g = ann.geometry as BboxGeometry;
      // A rotated box: the point turned back into the box's own frame.
      const [px, py] = g.rotation ? rotateAbout(x, y, g.x + g.width / 2, g.y + g.height / 2, -g.rotation) : [x, y];
      return px >= g.x - slack && px <= g.x + g.width + slack && py >= g.y - slack && py <= g.y + g.height + slack;
    }
    case 'polygon': {
      const g = ann.geometry as PolygonGeometry;
      return polygonParts(g).some((p) => pointInPolygon(x, y, p)) && !(g.holes ?? []).some((h) => pointInPolygon(x, y, h));
    }
    case 'polyline': {
      const pts = (ann.geometry as PathGeometry).points;
      for (let i = 1; i < pts.length; i++) if (nearSegment(x, y, pts[i - 1], pts[i], slack * 2)) return true;
      return false;
    }
    case 'points':
      return (ann.geometry as PathGeometry).points.some(([px, py]) => Math.hypot(px - x, py - y) <= slack * 3);
    case 'keypoints':
      return x >= bounds.x - slack * 3 && x <= bounds.x + bounds.width + slack * 3 && y >= bounds.y - slack * 3 && y <= bounds.y + bounds.height + slack * 3;
    case 'ellipse': {
      const g = ann.geometry as EllipseGeometry;
      const [px, py] = rotateAbout(x, y, g.cx, g.cy, -g.rotation);
      return ((px - g.cx) / (g.rx + slack)) ** 2 + ((py - g.cy) / (g.ry + slack)) ** 2 <= 1;
    }
    case 'mask': {
      if (!bitmap) return false;
      const px = Math.floor(x), py = Math.floor(y);
      return px >= 0 && py >= 0 && px < bitmap.width && py < bitmap.height && bitmap.data[py * bitmap.width + px] === 1;
    }
    default:
      return false;
  }
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

/** How far above a box's top edge (or an ellipse's top) its rotation handle sits, in screen pixels. */
export const ROTATE_HANDLE_PX = 24;
/** The index of the rotation handle among a box's handles (after its eight resize handles). */
export const BOX_ROTATE_HANDLE = 8;
/** An ellipse's handles: the end of its x radius, the end of its y radius, its rotation handle. */
export const ELLIPSE_HANDLES = { rx: 0, ry: 1, rotate: 2 } as const;

/**
 * The handles of a shape, in image pixels (`s`: canvas pixels per image pixel places the rotation handles): a box's
 * eight resize handles (turned with it) and its rotation handle; every vertex of every part of a polygon; the points
 * of a polyline, a point set or a skeleton (points not labelled sit at NaN: never grabbed); an ellipse's two radii
 * and its rotation.
 */
export function handlePoints(ann: Annotation, bounds: Rect, s = 1): Point[] {
  switch (ann.annotation_type) {
    case 'bbox': {
      const g = ann.geometry as BboxGeometry;
      const cx = g.x + g.width / 2, cy = g.y + g.height / 2, r = g.rotation ?? 0;
      const pts = boxHandlePoints({ x: g.x, y: g.y, width: g.width, height: g.height });
      pts.push([cx, g.y - ROTATE_HANDLE_PX / s]);
      return r ? pts.map(([x, y]) => rotateAbout(x, y, cx, cy, r)) : pts;
    }
    case 'polygon':
      return polygonParts(ann.geometry as PolygonGeometry).flat();
    case 'polyline':
    case 'points':
      return (ann.geometry as PathGeometry).points;
    case 'keypoints':
      return (ann.geometry as KeypointsGeometry).points.map(([x, y, v]) => (v > 0 ? [x, y] : [NaN, NaN]));
    case 'ellipse': {
      const g = ann.geometry as EllipseGeometry;
      return ([[g.cx + g.rx, g.cy], [g.cx, g.cy + g.ry], [g.cx, g.cy - g.ry - ROTATE_HANDLE_PX / s]] as Point[]).map(([x, y]) => rotateAbout(x, y, g.cx, g.cy, g.rotation));
    }
    default:
      return [];
  }
}

export const round = (v: number) => Math.round(v * 100) / 100;

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
  const b = boundsOf(ann);
  // The whole shape moves by the same amount, so it stays whole: the move is cut short at the image's border.
  if (b && ann.annotation_type !== 'mask') {
    dx = Math.max(-b.x, Math.min(w - b.x - b.width, dx));
    dy = Math.max(-b.y, Math.min(h - b.y - b.height, dy));
  }
  return shifted(ann, dx, dy, true);
}

/** The geometry moved by (dx, dy) as it is (`rounded`: to a hundredth of a pixel, as saved). */
export function shifted(ann: Annotation, dx: number, dy: number, rounded = false): Annotation['geometry'] {
  const r = rounded ? round : (v: number) => v;
  const move = (pts: Point[]): Point[] => pts.map(([x, y]) => [r(x + dx), r(y + dy)]);
  switch (ann.annotation_type) {
    case 'bbox': {
      const g = ann.geometry as BboxGeometry;
      return { ...g, x: r(g.x + dx), y: r(g.y + dy) };
    }
    case 'polygon': {
      const g = ann.geometry as PolygonGeometry;
      const out: PolygonGeometry = { points: move(g.points) };
      if (g.parts) out.parts = g.parts.map(move);
      if (g.holes) out.holes = g.holes.map(move);
      return out;
    }
    case 'polyline':
    case 'points':
      return { points: move((ann.geometry as PathGeometry).points) };
    case 'keypoints': {
      const g = ann.geometry as KeypointsGeometry;
      const out: KeypointsGeometry = { points: g.points.map(([x, y, v]) => (v > 0 ? [r(x + dx), r(y + dy), v] : [0, 0, 0])) };
      if (g.bbox) out.bbox = { ...g.bbox, x: r(g.bbox.x + dx), y: r(g.bbox.y + dy) };
      return out;
    }
    case 'ellipse': {
      const g = ann.geometry as EllipseGeometry;
      return { ...g, cx: r(g.cx + dx), cy: r(g.cy + dy) };
    }
    default:
      return ann.geometry;
  }
}
