import type { KeypointsGeometry, Skeleton } from '../../types.js';
import { clampBox, round, type Point } from '../geometry.js';
import { skeletonLayout } from '../skeleton-layout.js';
import { ClickTool } from './click-tool.js';
import { MIN_DRAG_PX, type Drag } from './drag-tool.js';
import type { ToolPointer } from './tool.js';

/**
 * Places a skeleton of the current class. Drag a box: the class's template is laid out in it, saved with every point
 * visible and selected, so its points can be dragged into place at once (X turns the last one dragged occluded, then
 * not labelled). Or click point by point, in the order of the template (the next point's name is shown at the
 * cursor): each click places the next point as visible; 0 skips it (not labelled); X turns the point just placed
 * occluded, then not labelled; Backspace takes it back. The skeleton is saved when its last point is placed, or at
 * Enter (the points left are not labelled). A class without a skeleton takes any number of points, saved at Enter.
 * Before the first click, a handle of the selected skeleton drags that point.
 */
export class KeypointsTool extends ClickTool<[number, number, number]> {
  readonly name = 'keypoints';
  /** The box being dragged to lay the template out in (before the first point). */
  private box: Drag | null = null;

  private get skeleton(): Skeleton | null {
    const c = this.host.classId;
    return c !== null ? this.host.skeletonOf(c) : null;
  }

  private get names(): string[] | null {
    return this.skeleton?.points ?? null;
  }

  private nextName(): string | null {
    const names = this.names;
    return names ? (names[this.points.length] ?? null) : `point ${this.points.length + 1}`;
  }

  protected place({ x, y, sx, sy }: ToolPointer): void {
    if (this.points.length === 0 && this.skeleton) this.box = { x0: x, y0: y, x1: x, y1: y, sx, sy };
    else this.addPoint(x, y);
  }

  private addPoint(x: number, y: number): void {
    const image = this.host.image;
    if (!image) return;
    this.points.push([round(Math.max(0, Math.min(image.width, x))), round(Math.max(0, Math.min(image.height, y))), 2]);
    this.afterStep();
  }

  move(p: ToolPointer): void {
    if (!this.box) return super.move(p);
    this.box.x1 = p.x;
    this.box.y1 = p.y;
  }

  up(p: ToolPointer): void {
    const b = this.box;
    this.box = null;
    if (!b) return super.up(p);
    // Not a drag but a click: the first point of a skeleton placed point by point.
    if (Math.abs(p.sx - b.sx) < MIN_DRAG_PX || Math.abs(p.sy - b.sy) < MIN_DRAG_PX) return this.addPoint(b.x0, b.y0);
    const laid = this.laidOut(b);
    if (!laid) return;
    const key = this.host.createWithClass({ annotation_type: 'keypoints', geometry: { points: laid.map(([x, y]) => [round(x), round(y), 2]) } });
    if (key === null) return;
    this.host.selectKey(key);
    this.host.message('Skeleton placed: drag its points into place; X turns the last one dragged occluded, then not labelled');
  }

  /** The template laid out in a dragged box (kept on the image). */
  private laidOut(b: Drag): Point[] | null {
    const skeleton = this.skeleton, image = this.host.image;
    return skeleton && image ? skeletonLayout(skeleton, clampBox(b.x0, b.y0, b.x1, b.y1, image.width, image.height)) : null;
  }

  /** 0 skips the next point (not labelled); X cycles the visibility of the point just placed (2 → 1 → 0). */
  key(key: string): boolean {
    if (this.handles.active || this.box) return false;
    if (key === '0') {
      this.points.push([0, 0, 0]);
      this.afterStep();
      return true;
    }
    if ((key === 'x' || key === 'X') && this.points.length > 0) {
      const last = this.points[this.points.length - 1];
      last[2] = last[2] === 2 ? 1 : last[2] === 1 ? 0 : 2;
      this.host.changed();
      return true;
    }
    return false;
  }

  private afterStep(): void {
    const names = this.names;
    if (names && this.points.length >= names.length) this.commit();
    else this.host.changed();
  }

  commit(): void {
    const names = this.names;
    const pts = this.points.map(([x, y, v]) => (v > 0 ? [x, y, v] : [0, 0, 0]) as [number, number, number]);
    this.points = [];
    if (pts.some((p) => p[2] > 0)) {
      while (names && pts.length < names.length) pts.push([0, 0, 0]);
      const geometry: KeypointsGeometry = { points: pts };
      this.host.createWithClass({ annotation_type: 'keypoints', geometry });
    }
    this.host.changed();
  }

  reset(): void {
    super.reset();
    this.box = null;
  }

  hint(): string {
    const next = this.nextName();
    const names = this.names;
    const progress = names ? ` (${this.points.length + 1} of ${names.length})` : '';
    const drag = names && this.points.length === 0 ? '; or drag a box to place the whole skeleton' : '';
    return `Keypoints: click to place ${next ?? 'the next point'}${progress}; 0 skips it, X makes the last one occluded / not labelled, Enter saves${drag}`;
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void {
    const names = this.names;
    const edges = this.skeleton?.edges ?? [];
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    const laid = this.box && this.laidOut(this.box);
    if (this.box) ctx.strokeRect(Math.min(this.box.x0, this.box.x1), Math.min(this.box.y0, this.box.y1), Math.abs(this.box.x1 - this.box.x0), Math.abs(this.box.y1 - this.box.y0));
    const points = laid ? laid.map(([x, y]) => [x, y, 2]) : this.points;
    ctx.beginPath();
    for (const [a, b] of edges) {
      const pa = points[a], pb = points[b];
      if (!pa || !pb || pa[2] === 0 || pb[2] === 0) continue;
      ctx.moveTo(pa[0], pa[1]);
      ctx.lineTo(pb[0], pb[1]);
    }
    ctx.stroke();
    const size = 11 / s;
    ctx.font = `${size}px sans-serif`;
    ctx.textBaseline = 'middle';
    points.forEach(([x, y, v], i) => {
      if (v === 0) return;
      ctx.fillStyle = color;
      if (v === 2) ctx.fillRect(x - 3 / s, y - 3 / s, 6 / s, 6 / s);
      else ctx.strokeRect(x - 3 / s, y - 3 / s, 6 / s, 6 / s);
      ctx.fillStyle = '#ffffff';
      ctx.fillText(names?.[i] ?? `${i + 1}`, x + 6 / s, y);
    });
    // The next point's name at the cursor: the annotator always knows what the click places.
    const next = this.box ? null : this.nextName();
    if (next) {
      const w = ctx.measureText(next).width;
      ctx.fillStyle = 'rgba(0,0,0,0.7)';
      ctx.fillRect(cursor[0] + 10 / s, cursor[1] - size, w + 6 / s, size * 2);
      ctx.fillStyle = '#ffffff';
      ctx.fillText(next, cursor[0] + 13 / s, cursor[1]);
    }
  }
}
