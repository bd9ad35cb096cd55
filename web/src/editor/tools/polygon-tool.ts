import { clampPoints, type Point } from '../geometry.js';
import type { Tool, ToolHost, ToolPointer } from './tool.js';

/** Click to place points; clicking near the first point (8 screen pixels), a double click or Enter closes the shape. */
export class PolygonTool implements Tool {
  readonly name = 'polygon';
  readonly followsCursor = true;
  points: Point[] = [];

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
    if (this.points.length >= 3) {
      this.host.createWithClass({ annotation_type: 'polygon', geometry: { points: clampPoints(this.points, image.width, image.height) } });
    }
    this.points = [];
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
