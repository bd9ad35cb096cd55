import type { Point } from '../geometry.js';
import { HandleDrag } from './handle-drag.js';
import type { Tool, ToolHost, ToolName, ToolPointer, ToolPreview } from './tool.js';

/**
 * The tools that place a shape click by click (polygon, polyline, points, keypoints): the points placed so far,
 * Backspace taking back the last, Esc dropping them; before the first click, a handle of the selected shape drags
 * that handle (where `grabsHandles`). A subclass says what a click places and when the shape is done.
 */
export abstract class ClickTool<P = Point> implements Tool {
  abstract readonly name: ToolName;
  readonly followsCursor = true;
  /** The points placed so far. */
  points: P[] = [];
  protected readonly handles: HandleDrag;
  /** Whether a press on a handle of the selected shape, before the first point, drags that handle. */
  protected readonly grabsHandles: boolean = true;

  constructor(protected readonly host: ToolHost) {
    this.handles = new HandleDrag(host);
  }

  /** A left click that is not on a handle. */
  protected abstract place(p: ToolPointer): void;

  down(p: ToolPointer): void {
    if (p.button !== 0) return;
    if (this.points.length === 0 && this.grabsHandles && this.handles.grab(p.x, p.y)) return;
    this.place(p);
  }

  move({ x, y }: ToolPointer): void {
    if (this.handles.active) this.handles.to(x, y);
  }

  up(_p: ToolPointer): void {
    if (this.handles.active) this.handles.release();
  }

  /** Backspace: drops the last point; false when there was none. */
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

  /** The points placed as squares, joined by a line to the cursor when `cursor` is given. */
  protected paintPoints(ctx: CanvasRenderingContext2D, s: number, color: string, points: Point[], cursor: Point | null): void {
    if (points.length === 0) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    if (cursor) {
      ctx.beginPath();
      points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.lineTo(cursor[0], cursor[1]);
      ctx.stroke();
    }
    ctx.fillStyle = color;
    for (const [x, y] of points) ctx.fillRect(x - 3 / s, y - 3 / s, 6 / s, 6 / s);
  }
}
