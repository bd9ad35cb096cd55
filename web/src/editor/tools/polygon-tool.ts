import { clampPoints, type Point } from '../geometry.js';
import type { ToolHost } from './tool-host.js';

/** Click to place points; clicking near the first point (8 screen pixels), a double click or Enter closes the shape. */
export class PolygonTool {
  points: Point[] = [];

  constructor(private readonly host: ToolHost) {}

  add(x: number, y: number): void {
    if (this.points.length >= 3) {
      const [fx, fy] = this.points[0];
      if (Math.hypot((fx - x) * this.host.scale, (fy - y) * this.host.scale) <= 8) return this.close();
    }
    this.points.push([x, y]);
  }

  close(): void {
    const image = this.host.image;
    if (!image) return;
    if (this.points.length >= 3) {
      this.host.createWithClass({ annotation_type: 'polygon', geometry: { points: clampPoints(this.points, image.width, image.height) } });
    }
    this.points = [];
    this.host.requestPaint();
  }

  /** Backspace: drops the last point; false when there was none. */
  removeLast(): boolean {
    if (this.points.length === 0) return false;
    this.points.pop();
    this.host.requestPaint();
    return true;
  }

  reset(): void {
    this.points = [];
  }
}
