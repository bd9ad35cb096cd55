import { round } from '../geometry.js';
import { HandleDrag } from './handle-drag.js';
import { MIN_DRAG_PX } from './box-tool.js';
import type { Tool, ToolHost, ToolPointer, ToolPreview } from './tool.js';

/**
 * Drag from the centre outwards to draw an ellipse of the current class (the drag's width and height are its radii);
 * a click selects the shape under it; the selected ellipse's handles set each radius and its rotation (R / Shift+R
 * turn it by 5°).
 */
export class EllipseTool implements Tool {
  readonly name = 'ellipse';
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
    if (Math.abs(sx - d.sx) < 3 && Math.abs(sy - d.sy) < 3) return this.host.selectKey(this.host.shapeAt(d.x0, d.y0));
    if (Math.abs(sx - d.sx) < MIN_DRAG_PX / 2 || Math.abs(sy - d.sy) < MIN_DRAG_PX / 2) {
      return this.host.message(`Ellipse not saved: drag at least ${MIN_DRAG_PX / 2} screen pixels from the centre in both directions`);
    }
    const cx = Math.max(0, Math.min(image.width, d.x0)), cy = Math.max(0, Math.min(image.height, d.y0));
    this.host.createWithClass({ annotation_type: 'ellipse', geometry: { cx: round(cx), cy: round(cy), rx: round(Math.abs(d.x1 - d.x0)), ry: round(Math.abs(d.y1 - d.y0)), rotation: 0 } });
  }

  reset(): void {
    this.drag = null;
    this.handles.reset();
  }

  preview(): ToolPreview | null {
    return this.handles.active ? { moving: null, maskEdit: null } : null;
  }

  hint(): string {
    return 'Ellipse: drag from the centre outwards; the round handle turns it (R / Shift+R: 5°)';
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string): void {
    const d = this.drag;
    if (!d) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    ctx.beginPath();
    ctx.ellipse(d.x0, d.y0, Math.abs(d.x1 - d.x0), Math.abs(d.y1 - d.y0), 0, 0, Math.PI * 2);
    ctx.stroke();
  }
}
