import { clampPoints, type Point } from '../geometry.js';
import { ClickTool } from './click-tool.js';
import type { ToolHost, ToolPointer } from './tool.js';

/**
 * Click to place points: a polyline (an open path, at least two points) or a point set (one shape holding every point
 * clicked). Enter or a double click finishes it; Backspace takes back the last point; a handle of the selected shape
 * drags that point.
 */
export class PathTool extends ClickTool {
  constructor(host: ToolHost, readonly name: 'polyline' | 'points') {
    super(host);
  }

  private get minimum(): number {
    return this.name === 'polyline' ? 2 : 1;
  }

  protected place({ x, y }: ToolPointer): void {
    // The second click of a double click lands on the first: one point, not two.
    const last = this.points[this.points.length - 1];
    if (last && Math.hypot((last[0] - x) * this.host.scale, (last[1] - y) * this.host.scale) < 3) return;
    this.points.push([x, y]);
    this.host.changed();
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

  hint(): string {
    const what = this.name === 'polyline' ? 'Polyline' : 'Points';
    return this.points.length === 0
      ? `${what}: click to place points; Enter or double-click finishes`
      : `${what}: ${this.points.length} point${this.points.length === 1 ? '' : 's'}; Enter finishes, Backspace takes one back, Esc cancels`;
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void {
    this.paintPoints(ctx, s, color, this.points, this.name === 'polyline' ? cursor : null);
  }
}
