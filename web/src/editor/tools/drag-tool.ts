import { HandleDrag } from './handle-drag.js';
import type { Tool, ToolHost, ToolName, ToolPointer, ToolPreview } from './tool.js';

/** A box drag shorter than this on screen (either side) is an accident, not a box: nothing is saved. */
export const MIN_DRAG_PX = 8;

/** A drag in progress: where it started and where it is, in image pixels, and where it started on screen. */
export interface Drag {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  sx: number;
  sy: number;
}

/**
 * The tools that draw a shape with one drag (box, ellipse): a click selects the shape under it (clicks again cycle
 * through stacked shapes), a handle of the
 * selected shape reshapes it, a flick shorter than `minDragPx` saves nothing and says so, any other drag is handed
 * to `finish`.
 */
export abstract class DragTool implements Tool {
  abstract readonly name: ToolName;
  readonly followsCursor = false;
  private drag: Drag | null = null;
  private readonly handles: HandleDrag;

  constructor(protected readonly host: ToolHost) {
    this.handles = new HandleDrag(host);
  }

  /** Shortest drag on screen, in both directions, that draws a shape. */
  protected abstract readonly minDragPx: number;
  /** What a too-short drag tells the annotator. */
  protected abstract readonly tooShort: string;
  /** Saves the shape a finished drag drew. */
  protected abstract finish(drag: Drag, image: { width: number; height: number }): void;
  /** Strokes the shape being drawn (stroke style and width are set). */
  protected abstract strokeDraft(ctx: CanvasRenderingContext2D, drag: Drag): void;

  down({ x, y, sx, sy, button }: ToolPointer): void {
    if (button !== 0 || this.handles.grab(x, y)) return;
    this.drag = { x0: x, y0: y, x1: x, y1: y, sx, sy };
  }

  move({ x, y }: ToolPointer): void {
    if (this.handles.active) this.handles.to(x, y);
    else if (this.drag) {
      this.drag.x1 = x;
      this.drag.y1 = y;
    }
  }

  up({ sx, sy }: ToolPointer): void {
    if (this.handles.active) return this.handles.release();
    const d = this.drag;
    this.drag = null;
    const image = this.host.image;
    if (!d || !image) return;
    // A click, not a drag: select what is under it.
    if (Math.abs(sx - d.sx) < 3 && Math.abs(sy - d.sy) < 3) return this.host.selectKey(this.host.nextShapeAt(d.x0, d.y0));
    // An accidental flick, not a shape: nothing is saved, and the user is told why.
    if (Math.abs(sx - d.sx) < this.minDragPx || Math.abs(sy - d.sy) < this.minDragPx) return this.host.message(this.tooShort);
    this.finish(d, image);
  }

  reset(): void {
    this.drag = null;
    this.handles.reset();
  }

  preview(): ToolPreview | null {
    return this.handles.active ? { moving: null, maskEdit: null } : null;
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string): void {
    if (!this.drag) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    this.strokeDraft(ctx, this.drag);
  }
}
