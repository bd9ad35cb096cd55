import type { Annotation, BboxGeometry, EllipseGeometry, KeypointsGeometry, PathGeometry, PolygonGeometry } from '../../types.js';
import { BOX_HANDLES, BOX_ROTATE_HANDLE, clampBox, clampPoints, ELLIPSE_HANDLES, handlePoints, normalizeDegrees, polygonParts, rotateAbout, round, type Point } from '../geometry.js';
import { HANDLE_PX } from '../renderer.js';
import type { ToolHost } from './tool.js';

/**
 * Dragging a handle of the selected shape (a box's corner, side or rotation handle, a polygon's vertex in any of its
 * parts, a point of a polyline, point set or skeleton, an ellipse's radius or rotation), shown live and saved on
 * release as one undoable edit. The select, box and shape tools offer it.
 */
export class HandleDrag {
  private grabbed: { key: number; handle: number; geometry: Annotation['geometry'] } | null = null;

  constructor(private readonly host: ToolHost) {}

  get active(): boolean {
    return this.grabbed !== null;
  }

  /** Takes the selected shape's handle under an image point; false when there is none. */
  grab(x: number, y: number): boolean {
    const key = this.host.selectedKey;
    const s = key !== null ? this.host.shape(key) : undefined;
    if (key === null || !s) return false;
    const r = (HANDLE_PX + 2) / this.host.scale;
    const handle = handlePoints(s.ann, s.bounds, this.host.scale).findIndex(([hx, hy]) => Math.abs(hx - x) <= r && Math.abs(hy - y) <= r);
    if (handle < 0) return false;
    this.grabbed = { key, handle, geometry: s.ann.geometry };
    // A skeleton's point, once touched, is the one the visibility key acts on.
    if (s.ann.annotation_type === 'keypoints') this.host.setActivePoint(handle);
    return true;
  }

  to(x: number, y: number): void {
    const d = this.grabbed;
    const s = d ? this.host.shape(d.key) : undefined;
    const image = this.host.image;
    if (!d || !s || !image) return;
    const next = dragHandle(s.ann.annotation_type, d.geometry, d.handle, x, y, image.width, image.height);
    if (next) this.host.previewShape(d.key, { ...s.ann, geometry: next });
  }

  release(): void {
    const d = this.grabbed;
    this.grabbed = null;
    const s = d ? this.host.shape(d.key) : undefined;
    const store = this.host.store;
    if (!d || !s || !store || s.ann.geometry === d.geometry) return;
    const moved = s.ann.geometry;
    // The preview changed the shape in place; restore it so the update records the right "before".
    this.host.previewShape(d.key, { ...s.ann, geometry: d.geometry });
    store.update(d.key, { class_id: s.ann.class_id, annotation_type: s.ann.annotation_type, geometry: moved });
  }

  reset(): void {
    this.grabbed = null;
  }
}

const DEG = 180 / Math.PI;

/** The geometry with handle `handle` dragged to (x, y) (null: the drag would make it degenerate). */
export function dragHandle(type: Annotation['annotation_type'], geometry: Annotation['geometry'], handle: number, x: number, y: number, W: number, H: number): Annotation['geometry'] | null {
  const inside = (v: number, max: number) => Math.max(0, Math.min(max, v));
  switch (type) {
    case 'bbox': {
      const g = geometry as BboxGeometry;
      const cx = g.x + g.width / 2, cy = g.y + g.height / 2, rot = g.rotation ?? 0;
      if (handle === BOX_ROTATE_HANDLE) {
        // The handle sits above the box: pointing straight up is no rotation.
        return { ...g, rotation: normalizeDegrees(Math.atan2(y - cy, x - cx) * DEG + 90) };
      }
      const h = BOX_HANDLES[handle];
      if (!rot) {
        const x0 = h.l ? x : g.x, x1 = h.r ? x : g.x + g.width;
        const y0 = h.t ? y : g.y, y1 = h.b ? y : g.y + g.height;
        const next = clampBox(x0, y0, x1, y1, W, H);
        return next.width >= 1 && next.height >= 1 ? next : null;
      }
      // A rotated box is resized in its own frame: the opposite side stays where it is.
      const [u, v] = rotateAbout(x, y, cx, cy, -rot);
      let l = g.x, r = g.x + g.width, t = g.y, b = g.y + g.height;
      if (h.l) l = u;
      if (h.r) r = u;
      if (h.t) t = v;
      if (h.b) b = v;
      const width = Math.abs(r - l), height = Math.abs(b - t);
      if (width < 1 || height < 1) return null;
      const [ncx, ncy] = rotateAbout((l + r) / 2, (t + b) / 2, cx, cy, rot);
      return { x: round(ncx - width / 2), y: round(ncy - height / 2), width: round(width), height: round(height), rotation: rot };
    }
    case 'ellipse': {
      const g = geometry as EllipseGeometry;
      if (handle === ELLIPSE_HANDLES.rotate) return { ...g, rotation: normalizeDegrees(Math.atan2(y - g.cy, x - g.cx) * DEG + 90) };
      const [u, v] = rotateAbout(x, y, g.cx, g.cy, -g.rotation);
      const next = handle === ELLIPSE_HANDLES.rx ? { ...g, rx: round(Math.abs(u - g.cx)) } : { ...g, ry: round(Math.abs(v - g.cy)) };
      return next.rx >= 0.5 && next.ry >= 0.5 ? next : null;
    }
    case 'polygon': {
      const g = geometry as PolygonGeometry;
      const parts = polygonParts(g).map((p) => p.slice());
      let i = handle;
      const part = parts.findIndex((p) => (i < p.length ? true : ((i -= p.length), false)));
      if (part < 0) return null;
      parts[part][i] = [x, y];
      const clamped = parts.map((p) => clampPoints(p, W, H));
      const out: PolygonGeometry = { points: clamped[0] };
      if (g.parts && g.parts.length) out.parts = clamped;
      if (g.holes) out.holes = g.holes;
      return out;
    }
    case 'polyline':
    case 'points': {
      const pts = (geometry as PathGeometry).points.slice();
      pts[handle] = [x, y];
      return { points: clampPoints(pts, W, H) };
    }
    case 'keypoints': {
      const g = geometry as KeypointsGeometry;
      const pts = g.points.slice();
      pts[handle] = [round(inside(x, W)), round(inside(y, H)), pts[handle][2] || 2];
      return { ...g, points: pts };
    }
    default:
      return null;
  }
}


