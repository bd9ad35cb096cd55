import { clampPoints, type Point } from '../geometry.js';
import { HandleDrag } from './handle-drag.js';
import type { Tool, ToolHost, ToolPointer, ToolPreview } from './tool.js';

/**
 * Click to place points: a polyline (an open path, at least two points) or a point set (one shape holding every point
 * clicked). Enter or a double click finishes it; Backspace takes back the last point; a handle of the selected shape
 * drags that point.
 */
export class PathTool implements Tool {
  readonly followsCursor = true;
  points: Point[] = [];
  private readonly handles: HandleDrag;

  constructor(private readonly host: ToolHost, readonly name: 'polyline' | 'points') {
    this.handles = new HandleDrag(host);
  }

  private get minimum(): number {
    return this.name === 'polyline' ? 2 : 1;
  }

  down({ x, y, button }: ToolPointer): void {
    if (button !== 0) return;
    if (this.points.length === 0 && this.handles.grab(x, y)) return;
    // The second click of a double click lands on the first: one point, not two.
    const last = this.points[this.points.length - 1];
    if (last && Math.hypot((last[0] - x) * this.host.scale, (last[1] - y) * this.host.scale) < 3) return;
    this.points.push([x, y]);
    this.host.changed();
  }

  move({ x, y }: ToolPointer): void {
    if (this.handles.active) this.handles.to(x, y);
  }

  up(): void {
    if (this.handles.active) this.handles.release();
  }

  doubleClick(): void {
    this.commit();
  }

  commit(): void {
    const image = this.host.image;
    if (!image) return;
    if (this.points.length >= this.minimum) {
      this.host.createWithClass({ annotation_type: this.name, geometry: { points: clampPoints(this.points, image.width, image.height) } });
    } else if (this.points.length > 0) this.host.message(`A polyline needs at least two points`);
    this.points = [];
    this.host.changed();
  }

  stepBack(): boolean {
    if (this.points.length === 0) return false;
    this.points.pop();
    this.host.changed();
    return true;
  }

  reset(): void {
    this.points = [];
    this.handles.reset();
  }

  preview(): ToolPreview | null {
    return this.handles.active ? { moving: null, maskEdit: null } : null;
  }

  hint(): string {
    const what = this.name === 'polyline' ? 'Polyline' : 'Points';
    return this.points.length === 0
      ? `${what}: click to place points; Enter or double-click finishes`
      : `${what}: ${this.points.length} point${this.points.length === 1 ? '' : 's'}; Enter finishes, Backspace takes one back, Esc cancels`;
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void {
    if (this.points.length === 0) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    if (this.name === 'polyline') {
      ctx.beginPath();
      this.points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.lineTo(cursor[0], cursor[1]);
      ctx.stroke();
    }
    ctx.fillStyle = color;
    for (const [x, y] of this.points) ctx.fillRect(x - 3 / s, y - 3 / s, 6 / s, 6 / s);
  }
}
