import { clampBox } from '../geometry.js';
import { HandleDrag } from './handle-drag.js';
import type { Tool, ToolHost, ToolPointer, ToolPreview } from './tool.js';

/** A box drag shorter than this on screen (either side) is an accident, not a box: nothing is saved. */
export const MIN_DRAG_PX = 8;

/** Drag to draw a box of the current class; a click selects the shape under it, a handle reshapes the selected one. */
export class BoxTool implements Tool {
  readonly name = 'box';
  readonly followsCursor = false;
  private drag: { x0: number; y0: number; x1: number; y1: number; sx: number; sy: number } | null = null;
  private readonly handles: HandleDrag;

  constructor(private readonly host: ToolHost) {
    this.handles = new HandleDrag(host);
  }

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
    if (Math.abs(sx - d.sx) < 3 && Math.abs(sy - d.sy) < 3) {
      // A click, not a drag: select what is under it.
      this.host.selectKey(this.host.shapeAt(d.x0, d.y0));
    } else if (Math.abs(sx - d.sx) < MIN_DRAG_PX || Math.abs(sy - d.sy) < MIN_DRAG_PX) {
      // An accidental flick, not a box: nothing is saved, and the user is told why.
      this.host.message(`Box not saved: drag at least ${MIN_DRAG_PX} screen pixels in both directions`);
    } else {
      const g = clampBox(d.x0, d.y0, d.x1, d.y1, image.width, image.height);
      if (g.width >= 1 && g.height >= 1) this.host.createWithClass({ annotation_type: 'bbox', geometry: g });
    }
  }

  reset(): void {
    this.drag = null;
    this.handles.reset();
  }

  preview(): ToolPreview | null {
    return this.handles.active ? { moving: null, maskEdit: null } : null;
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string): void {
    const d = this.drag;
    if (!d) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    ctx.strokeRect(Math.min(d.x0, d.x1), Math.min(d.y0, d.y1), Math.abs(d.x1 - d.x0), Math.abs(d.y1 - d.y0));
  }
}
