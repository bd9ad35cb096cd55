/**
 * Everything the image and annotation checks read, loaded once per report: the images with their cached features
 * and the annotations as typed columns (about 50 bytes per annotation), grouped by image. Checks never query.
 */
import { ANNOTATION_TYPES, geometryBox, type Box, type Point } from '../../imaging/geometry.js';
import { distanceToPath, distinctPoints, shapeArea } from '../../imaging/shape-metrics.js';
import { FINE_MAX_DISTANCE, hashDistance, hashHalves } from '../../imaging/perceptual-hash.js';
import type { MeasuredImageRow } from './image-features.repository.js';
import type { Prediction } from './model-predictions.adapter.js';
import { nearDuplicateGroups } from './near-duplicates.logic.js';

/** The type index of a type not in ANNOTATION_TYPES. */
export const TYPE_OTHER = ANNOTATION_TYPES.length;
const ELLIPSE = ANNOTATION_TYPES.indexOf('ellipse');

/**
 * What the shape checks (annotation-checks.logic.ts) read of a shape beyond its envelope, kept only for the shapes
 * that have something to report, so a clean dataset costs nothing here.
 */
export interface ShapeNote {
  /** Keypoints: the skeleton points not labelled (v 0), by index. */
  unlabelled?: number[];
  /** Keypoints with a box: the labelled points beyond it, as [index, pixels beyond]. */
  beyondBox?: [number, number][];
  /** A rotated box under a pixel wide or high: its smaller side; an ellipse under a pixel across: its smaller diameter. */
  across?: number;
  /** A polyline with fewer than 2 distinct points: how many it has. */
  distinct?: number;
  /** A polygon's holes (indexes) reaching outside every part of the object. */
  strayHoles?: number[];
}

/** Hole vertices tested per hole (evenly spaced): enough to see a hole outside its parts, cheap for traced holes. */
const HOLE_SAMPLES = 64;
/** How far outside every part a hole's vertex may lie (a hole drawn along a part's edge). */
const HOLE_TOLERANCE = 0.5;

/** Whether a point lies inside a ring (even–odd rule). */
function insideRing(p: Point, ring: readonly Point[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if (yi > p[1] !== yj > p[1] && p[0] < xi + ((p[1] - yi) / (yj - yi)) * (xj - xi)) inside = !inside;
  }
  return inside;
}

/** How far a labelled point lies beyond a box (0 inside it or on its edge). */
const beyond = (p: readonly number[], b: Box) => Math.max(0, b.x - p[0], p[0] - (b.x + b.width), b.y - p[1], p[1] - (b.y + b.height));

/** The indexes of the holes with a vertex farther than HOLE_TOLERANCE outside every part. */
function strayHoles(parts: Point[][], holes: Point[][]): number[] {
  const closed = parts.map((part) => [...part, part[0]]);
  const outside = (p: Point) => !parts.some((part) => insideRing(p, part)) && closed.every((ring) => distanceToPath(p, ring) > HOLE_TOLERANCE);
  const out: number[] = [];
  holes.forEach((hole, h) => {
    const step = Math.max(1, Math.floor(hole.length / HOLE_SAMPLES));
    for (let i = 0; i < hole.length; i += step) {
      if (outside(hole[i])) {
        out.push(h);
        return;
      }
    }
  });
  return out;
}

/** What a stored geometry of a type has for the shape checks; null when nothing. */
export function shapeNote(type: string, g: any): ShapeNote | null {
  const note: ShapeNote = {};
  switch (type) {
    case 'keypoints': {
      const points = (g.points ?? []) as number[][];
      const unlabelled = points.flatMap((p, i) => (p[2] === 0 ? [i] : []));
      if (unlabelled.length > 0) note.unlabelled = unlabelled;
      if (g.bbox) {
        const out = points.flatMap((p, i): [number, number][] => (p[2] === 0 ? [] : [[i, beyond(p, g.bbox)]])).filter(([, d]) => d > 0);
        if (out.length > 0) note.beyondBox = out;
      }
      break;
    }
    case 'bbox':
      if (g.rotation && Math.min(g.width, g.height) < 1) note.across = Math.min(g.width, g.height);
      break;
    case 'ellipse':
      if (2 * Math.min(g.rx, g.ry) < 1) note.across = 2 * Math.min(g.rx, g.ry);
      break;
    case 'polyline': {
      const distinct = distinctPoints(g.points ?? [], 1e-6, 2);
      if (distinct < 2) note.distinct = distinct;
      break;
    }
    case 'polygon':
      if (g.holes?.length) {
        const stray = strayHoles(g.parts?.length ? g.parts : [g.points], g.holes);
        if (stray.length > 0) note.strayHoles = stray;
      }
      break;
  }
  return Object.keys(note).length > 0 ? note : null;
}

/**
 * An annotation as the snapshot reads it, a row of values: id, image id, class id, the type's index in
 * ANNOTATION_TYPES (TYPE_OTHER for another), the box (x, y, width, height: a bbox's or a mask's, as the database
 * stores them; null for other types) and a polygon's geometry as JSON text (null for other types).
 */
export type AnnotationChunkRow = [
  id: number,
  imageId: number,
  classId: number,
  type: number,
  x: number | null,
  y: number | null,
  w: number | null,
  h: number | null,
  polygon: string | null,
];

export class AnnotationColumns {
  length = 0;
  id: Int32Array;
  image: Int32Array;
  classId: Int32Array;
  type: Uint8Array;
  x: Float64Array;
  y: Float64Array;
  w: Float64Array;
  h: Float64Array;
  /** Shape area (polygon: shoelace; box and mask: their box). */
  area: Float64Array;
  /** Polygon point count (its first part's), a keypoint instance's, a polyline's or a point set's; 0 for other types. */
  points: Int32Array;
  /** What the shape checks read, by annotation index, for the shapes that have something to report (ShapeNote). */
  readonly notes = new Map<number, ShapeNote>();

  constructor(capacity: number) {
    const c = Math.max(16, capacity);
    this.id = new Int32Array(c);
    this.image = new Int32Array(c);
    this.classId = new Int32Array(c);
    this.type = new Uint8Array(c);
    this.x = new Float64Array(c);
    this.y = new Float64Array(c);
    this.w = new Float64Array(c);
    this.h = new Float64Array(c);
    this.area = new Float64Array(c);
    this.points = new Int32Array(c);
  }

  private grow(): void {
    const c = this.id.length * 2;
    const g = <T extends Int32Array | Float64Array | Uint8Array>(a: T): T => {
      const next = new (a.constructor as new (n: number) => T)(c);
      next.set(a);
      return next;
    };
    this.id = g(this.id);
    this.image = g(this.image);
    this.classId = g(this.classId);
    this.type = g(this.type);
    this.x = g(this.x);
    this.y = g(this.y);
    this.w = g(this.w);
    this.h = g(this.h);
    this.area = g(this.area);
    this.points = g(this.points);
  }

  push(row: AnnotationChunkRow, imageIndex: number): void {
    if (this.length === this.id.length) this.grow();
    const i = this.length++;
    const [id, , classId, type, x, y, w, h, polygon] = row;
    this.id[i] = id;
    this.image[i] = imageIndex;
    this.classId[i] = classId;
    this.type[i] = type;
    if (type === 1) {
      this.pushPolygon(i, polygon);
      return;
    }
    if (polygon !== null) {
      this.pushShape(i, type, polygon);
      return;
    }
    if (x !== null && y !== null && w !== null && h !== null) {
      this.setBox(i, x, y, w, h);
      this.area[i] = Math.max(0, w) * Math.max(0, h);
    }
  }

  /** A rotated box's or another shape's envelope and area (geometry.ts, shape-metrics.ts). */
  private pushShape(i: number, type: number, geometry: string): void {
    let g: any;
    try {
      g = JSON.parse(geometry);
    } catch {
      return;
    }
    const name = ANNOTATION_TYPES[type];
    if (name && g) this.measure(i, name, g);
  }

  /** A parsed geometry's envelope, area, point count and note. */
  private measure(i: number, name: string, g: any): void {
    if (Array.isArray(g.points)) this.points[i] = g.points.length;
    const note = shapeNote(name, g);
    if (note) this.notes.set(i, note);
    const box = geometryBox(name, g);
    if (!box) return;
    this.setBox(i, box.x, box.y, box.width, box.height);
    this.area[i] = shapeArea(name, g);
  }

  /** A polygon's box, area (shoelace) and point count. */
  private pushPolygon(i: number, geometry: string | null): void {
    let g: any;
    try {
      g = JSON.parse(geometry ?? 'null');
    } catch {
      g = null;
    }
    if (!g || !Array.isArray(g.points)) return;
    if (g.parts || g.holes) {
      // An object of several parts or with holes: its envelope covers every part, its area takes the holes away.
      this.measure(i, 'polygon', g);
      return;
    }
    const pts = g.points as number[][];
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    let twice = 0;
    for (let k = 0; k < pts.length; k++) {
      const [px, py] = pts[k];
      const [qx, qy] = pts[(k + 1) % pts.length];
      twice += px * qy - qx * py;
      if (px < minX) minX = px;
      if (py < minY) minY = py;
      if (px > maxX) maxX = px;
      if (py > maxY) maxY = py;
    }
    this.points[i] = pts.length;
    if (pts.length > 0) this.setBox(i, minX, minY, maxX - minX, maxY - minY);
    this.area[i] = Math.abs(twice) / 2;
  }

  private setBox(i: number, x: number, y: number, w: number, h: number): void {
    this.x[i] = x;
    this.y[i] = y;
    this.w[i] = w;
    this.h[i] = h;
  }

  /** Spatial annotations (box, polygon, mask, ellipse) have a box to measure. */
  spatial(i: number): boolean {
    return this.type[i] < 3 || this.type[i] === ELLIPSE;
  }
}

export function iou(a: AnnotationColumns, i: number, j: number): number {
  const ix = Math.max(0, Math.min(a.x[i] + a.w[i], a.x[j] + a.w[j]) - Math.max(a.x[i], a.x[j]));
  const iy = Math.max(0, Math.min(a.y[i] + a.h[i], a.y[j] + a.h[j]) - Math.max(a.y[i], a.y[j]));
  const inter = ix * iy;
  const union = a.w[i] * a.h[i] + a.w[j] * a.h[j] - inter;
  return union <= 0 ? 0 : inter / union;
}

/** A detector's predictions per image index, for the model-assisted checks. */
export interface SnapshotPredictions {
  model: string;
  byImage: Prediction[][];
}

export class DatasetSnapshot {
  /** Set by the report when a model-assisted check runs and the project has a detector. */
  predictions?: SnapshotPredictions;
  /** Image index → its annotations' indexes (start..end in `order`). */
  readonly annotationStart: Int32Array;
  readonly order: Int32Array;
  private readonly groupsByDistance = new Map<number, number[][]>();

  constructor(
    readonly projectId: number,
    readonly images: MeasuredImageRow[],
    readonly annotations: AnnotationColumns,
    readonly classes: Map<number, string>,
    /** The point names of each class with a keypoint skeleton. */
    readonly skeletons = new Map<number, string[]>(),
  ) {
    const n = images.length;
    const start = new Int32Array(n + 1);
    for (let k = 0; k < annotations.length; k++) start[annotations.image[k] + 1]++;
    for (let i = 0; i < n; i++) start[i + 1] += start[i];
    const fill = start.slice(0, n);
    const order = new Int32Array(annotations.length);
    for (let k = 0; k < annotations.length; k++) order[fill[annotations.image[k]]++] = k;
    this.annotationStart = start;
    this.order = order;
  }

  /** Calls `fn` with the annotation indexes of each image. */
  forEachImage(fn: (imageIndex: number, from: number, to: number) => void): void {
    for (let i = 0; i < this.images.length; i++) fn(i, this.annotationStart[i], this.annotationStart[i + 1]);
  }

  className(classId: number): string {
    return this.classes.get(classId) ?? `#${classId}`;
  }

  /** Near-duplicate groups (image indexes) among readable images, memoised per distance. */
  nearDuplicateGroups(maxDistance: number): number[][] {
    let groups = this.groupsByDistance.get(maxDistance);
    if (!groups) {
      const hashed = [];
      for (let i = 0; i < this.images.length; i++) {
        const image = this.images[i];
        if (!image.dhash || image.readable === 0) continue;
        const [high, low] = hashHalves(image.dhash);
        hashed.push({ index: i, high, low });
      }
      // A pair the 64-bit hash finds is a near duplicate only if the fine hashes agree too, where both are measured:
      // on its own the 64-bit hash groups different photos of one scene (bench/near-duplicates.ts).
      const fine = (i: number) => this.images[i].fine;
      groups = nearDuplicateGroups(hashed, maxDistance, (a, b) => {
        const fa = fine(a);
        const fb = fine(b);
        return !fa || !fb || hashDistance(fa, fb) <= FINE_MAX_DISTANCE;
      });
      this.groupsByDistance.set(maxDistance, groups);
    }
    return groups;
  }

  /** Groups of images with identical pixels (same thumbnail pixels), image indexes ascending. */
  exactDuplicateGroups(): number[][] {
    const byHash = new Map<string, number[]>();
    for (let i = 0; i < this.images.length; i++) {
      const key = this.images[i].pixel_hash;
      if (!key || this.images[i].readable === 0) continue;
      const list = byHash.get(key);
      if (list) list.push(i);
      else byHash.set(key, [i]);
    }
    return [...byHash.values()].filter((g) => g.length > 1);
  }
}
