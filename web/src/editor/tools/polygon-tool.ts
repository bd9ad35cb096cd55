import type { PolygonGeometry } from '../../types.js';
import { clampPoints, polygonParts, type Point } from '../geometry.js';
import type { Tool, ToolHost, ToolPointer } from './tool.js';

/**
 * Click to place points; clicking near the first point (8 screen pixels), a double click or Enter closes the shape.
 * With `partOf` set (Shift+P on a selected polygon), the closed shape is added to that object as another part.
 */
export class PolygonTool implements Tool {
  readonly name = 'polygon';
  readonly followsCursor = true;
  points: Point[] = [];
  /** The polygon object (store key) the next shape becomes a part of; null: a new object. */
  partOf: number | null = null;

  constructor(private readonly host: ToolHost) {}

  down({ x, y, button }: ToolPointer): void {
    if (button !== 0) return;
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
      const target = this.partOf !== null ? this.host.shape(this.partOf) : undefined;
      if (target && target.ann.annotation_type === 'polygon' && this.host.store) {
        const g = target.ann.geometry as PolygonGeometry;
        const parts = [...polygonParts(g), ring];
        const geometry: PolygonGeometry = { points: parts[0], parts, ...(g.holes ? { holes: g.holes } : {}) };
        this.host.store.update(this.partOf!, { class_id: target.ann.class_id, annotation_type: 'polygon', geometry });
        this.host.message(`Part ${parts.length} added to the object (Ctrl+Z undoes)`);
      } else {
        this.host.createWithClass({ annotation_type: 'polygon', geometry: { points: ring } });
      }
    }
    this.partOf = null;
    this.points = [];
    this.host.changed();
    this.host.requestPaint();
  }

  /** Backspace: drops the last point; false when there was none. */
  stepBack(): boolean {
    if (this.points.length === 0) return false;
    this.points.pop();
    this.host.requestPaint();
    return true;
  }

  reset(): void {
    this.points = [];
    this.partOf = null;
  }

  hint(): string | null {
    return this.partOf !== null ? 'New part of the selected object: click its points, Enter adds it (Esc cancels)' : null;
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void {
    if (this.points.length === 0) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    ctx.beginPath();
    this.points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    ctx.lineTo(cursor[0], cursor[1]);
    ctx.stroke();
    ctx.fillStyle = color;
    for (const [x, y] of this.points) ctx.fillRect(x - 3 / s, y - 3 / s, 6 / s, 6 / s);
  }
}
