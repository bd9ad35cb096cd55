import type { PolygonGeometry } from '../../types.js';
import { clampPoints, pointInPolygon, polygonParts, type Point } from '../geometry.js';
import { ClickTool } from './click-tool.js';
import type { ToolPointer } from './tool.js';

/** What the next closed shape adds to an existing polygon object (store key): another part, or a hole in it. */
export interface AddTo {
  key: number;
  as: 'part' | 'hole';
}

/**
 * Click to place points; clicking near the first point (8 screen pixels), a double click or Enter closes the shape.
 * With `addTo` set (Shift+P / Shift+H on a selected polygon), the closed shape becomes another part of that object,
 * or a hole in it (a hole must lie inside one of its parts).
 */
export class PolygonTool extends ClickTool {
  readonly name = 'polygon';
  protected readonly grabsHandles = false;
  addTo: AddTo | null = null;

  protected place({ x, y }: ToolPointer): void {
    if (this.points.length >= 3) {
      const [fx, fy] = this.points[0];
      if (Math.hypot((fx - x) * this.host.scale, (fy - y) * this.host.scale) <= 8) return this.commit();
    }
    this.points.push([x, y]);
  }

  doubleClick(): void {
    this.commit();
  }

  commit(): void {
    const image = this.host.image;
    if (!image) return;
    // The second click of a double click lands on the last point: drop the repeat.
    const pts = this.points.filter((p, i) => i === 0 || Math.hypot(p[0] - this.points[i - 1][0], p[1] - this.points[i - 1][1]) * this.host.scale >= 3);
    if (pts.length >= 3) {
      const ring = clampPoints(pts, image.width, image.height);
      if (this.addTo && this.host.shape(this.addTo.key)) this.addRing(this.addTo, ring);
      else this.host.createWithClass({ annotation_type: 'polygon', geometry: { points: ring } });
    }
    this.addTo = null;
    this.points = [];
    this.host.changed();
  }

  /** Adds a part or a hole to an object: one undoable edit. */
  private addRing(to: AddTo, ring: Point[]): void {
    const target = this.host.shape(to.key);
    const store = this.host.store;
    if (!target || target.ann.annotation_type !== 'polygon' || !store) return;
    const g = target.ann.geometry as PolygonGeometry;
    const parts = polygonParts(g);
    let geometry: PolygonGeometry;
    if (to.as === 'hole') {
      if (!parts.some((part) => ring.every(([x, y]) => pointInPolygon(x, y, part)))) {
        return this.host.message('Hole not saved: draw it inside the selected object');
      }
      const holes = [...(g.holes ?? []), ring];
      geometry = { points: g.points, ...(g.parts ? { parts: g.parts } : {}), holes };
      this.host.message(`Hole ${holes.length} cut in the object (Ctrl+Z undoes)`);
    } else {
      const all = [...parts, ring];
      geometry = { points: all[0], parts: all, ...(g.holes ? { holes: g.holes } : {}) };
      this.host.message(`Part ${all.length} added to the object (Ctrl+Z undoes)`);
    }
    store.update(to.key, { class_id: target.ann.class_id, annotation_type: 'polygon', geometry });
  }

  reset(): void {
    super.reset();
    this.addTo = null;
  }

  hint(): string | null {
    if (!this.addTo) return null;
    return this.addTo.as === 'hole'
      ? 'Hole in the selected object: click its points inside it, Enter cuts it (Esc cancels)'
      : 'New part of the selected object: click its points, Enter adds it (Esc cancels)';
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void {
    this.paintPoints(ctx, s, color, this.points, cursor);
  }
}
