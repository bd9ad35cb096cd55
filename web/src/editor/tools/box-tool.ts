import { clampBox } from '../geometry.js';
import { DragTool, MIN_DRAG_PX, type Drag } from './drag-tool.js';

/** Drag to draw a box of the current class; a click selects the shape under it, a handle reshapes the selected one. */
export class BoxTool extends DragTool {
  readonly name = 'box';
  protected readonly minDragPx = MIN_DRAG_PX;
  protected readonly tooShort = `Box not saved: drag at least ${MIN_DRAG_PX} screen pixels in both directions`;

  protected finish(d: Drag, image: { width: number; height: number }): void {
    const g = clampBox(d.x0, d.y0, d.x1, d.y1, image.width, image.height);
    if (g.width >= 1 && g.height >= 1) this.host.createWithClass({ annotation_type: 'bbox', geometry: g });
  }

  protected strokeDraft(ctx: CanvasRenderingContext2D, d: Drag): void {
    ctx.strokeRect(Math.min(d.x0, d.x1), Math.min(d.y0, d.y1), Math.abs(d.x1 - d.x0), Math.abs(d.y1 - d.y0));
  }
}
