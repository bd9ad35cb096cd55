/**
 * Everything the image and annotation checks read, loaded once per report: the images with their cached features
 * and the annotations as typed columns (about 50 bytes per annotation), grouped by image. Checks never query.
 */
import { ANNOTATION_TYPES, geometryBox } from '../../imaging/geometry.js';
import { shapeArea } from '../../imaging/shape-metrics.js';
import { hashHalves } from '../../imaging/perceptual-hash.js';
import type { MeasuredImageRow } from './image-features.repository.js';
import type { Prediction } from './model-predictions.adapter.js';
import { nearDuplicateGroups } from './near-duplicates.logic.js';

/** The type index of a type not in ANNOTATION_TYPES. */
export const TYPE_OTHER = ANNOTATION_TYPES.length;
const ELLIPSE = ANNOTATION_TYPES.indexOf('ellipse');

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
  /** Polygon point count; 0 for other types. */
  points: Int32Array;

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
    const box = name && g ? geometryBox(name, g) : null;
    if (!box) return;
    this.setBox(i, box.x, box.y, box.width, box.height);
    this.area[i] = shapeArea(name, g);
    if (Array.isArray(g.points)) this.points[i] = g.points.length;
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
      groups = nearDuplicateGroups(hashed, maxDistance);
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
