import { round } from '../geometry.js';
import { DragTool, MIN_DRAG_PX, type Drag } from './drag-tool.js';

/**
 * Drag from the centre outwards to draw an ellipse of the current class (the drag's width and height are its radii);
 * a click selects the shape under it; the selected ellipse's handles set each radius and its rotation (R / Shift+R
 * turn it by 5°).
 */
export class EllipseTool extends DragTool {
  readonly name = 'ellipse';
  protected readonly minDragPx = MIN_DRAG_PX / 2;
  protected readonly tooShort = `Ellipse not saved: drag at least ${MIN_DRAG_PX / 2} screen pixels from the centre in both directions`;

  protected finish(d: Drag, image: { width: number; height: number }): void {
    const cx = Math.max(0, Math.min(image.width, d.x0));
    const cy = Math.max(0, Math.min(image.height, d.y0));
    this.host.createWithClass({ annotation_type: 'ellipse', geometry: { cx: round(cx), cy: round(cy), rx: round(Math.abs(d.x1 - d.x0)), ry: round(Math.abs(d.y1 - d.y0)), rotation: 0 } });
  }

  hint(): string {
    return 'Ellipse: drag from the centre outwards; the round handle turns it (R / Shift+R: 5°)';
  }

  protected strokeDraft(ctx: CanvasRenderingContext2D, d: Drag): void {
    ctx.beginPath();
    ctx.ellipse(d.x0, d.y0, Math.abs(d.x1 - d.x0), Math.abs(d.y1 - d.y0), 0, 0, Math.PI * 2);
    ctx.stroke();
  }
}
