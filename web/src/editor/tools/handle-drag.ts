import type { Annotation, BboxGeometry } from '../../types.js';
import { BOX_HANDLES, clampBox, clampPoints, handlePoints, type Point } from '../geometry.js';
import { HANDLE_PX } from '../renderer.js';
import type { ToolHost } from './tool.js';

/**
 * Dragging a handle of the selected shape (a box's corner or side, a polygon's vertex), shown live and saved on
 * release as one undoable edit. The select and box tools both offer it.
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
    const handle = handlePoints(s.ann, s.bounds).findIndex(([hx, hy]) => Math.abs(hx - x) <= r && Math.abs(hy - y) <= r);
    if (handle < 0) return false;
    this.grabbed = { key, handle, geometry: s.ann.geometry };
    return true;
  }

  to(x: number, y: number): void {
    const d = this.grabbed;
    const s = d ? this.host.shape(d.key) : undefined;
    const image = this.host.image;
    if (!d || !s || !image) return;
    const { width: W, height: H } = image;
    if (s.ann.annotation_type === 'bbox') {
      const g = d.geometry as BboxGeometry;
      const h = BOX_HANDLES[d.handle];
      const x0 = h.l ? x : g.x, x1 = h.r ? x : g.x + g.width;
      const y0 = h.t ? y : g.y, y1 = h.b ? y : g.y + g.height;
      const next = clampBox(x0, y0, x1, y1, W, H);
      if (next.width >= 1 && next.height >= 1) this.host.previewShape(d.key, { ...s.ann, geometry: next });
    } else if (s.ann.annotation_type === 'polygon') {
      const pts = (s.ann.geometry as { points: Point[] }).points.slice();
      pts[d.handle] = [x, y];
      this.host.previewShape(d.key, { ...s.ann, geometry: { points: clampPoints(pts, W, H) } });
    }
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
