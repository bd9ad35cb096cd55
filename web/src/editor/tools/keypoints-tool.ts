import type { KeypointsGeometry } from '../../types.js';
import { round, type Point } from '../geometry.js';
import { HandleDrag } from './handle-drag.js';
import type { Tool, ToolHost, ToolPointer, ToolPreview } from './tool.js';

/**
 * Places a skeleton of the current class point by point, in the order of its template (the next point's name is
 * shown at the cursor): each click places the next point as visible; 0 skips it (not labelled); X turns the point
 * just placed occluded, then not labelled; Backspace takes it back. The skeleton is saved when its last point is
 * placed, or at Enter (the points left are not labelled). A class without a skeleton takes any number of points,
 * saved at Enter. Before the first click, a handle of the selected skeleton drags that point.
 */
export class KeypointsTool implements Tool {
  readonly name = 'keypoints';
  readonly followsCursor = true;
  /** The points placed so far: [x, y, v]. */
  points: [number, number, number][] = [];
  private readonly handles: HandleDrag;

  constructor(private readonly host: ToolHost) {
    this.handles = new HandleDrag(host);
  }

  private get names(): string[] | null {
    const c = this.host.classId;
    return c !== null ? (this.host.skeletonOf(c)?.points ?? null) : null;
  }

  private nextName(): string | null {
    const names = this.names;
    return names ? (names[this.points.length] ?? null) : `point ${this.points.length + 1}`;
  }

  down({ x, y, button }: ToolPointer): void {
    if (button !== 0) return;
    if (this.points.length === 0 && this.handles.grab(x, y)) return;
    const image = this.host.image;
    if (!image) return;
    this.points.push([round(Math.max(0, Math.min(image.width, x))), round(Math.max(0, Math.min(image.height, y))), 2]);
    this.afterStep();
  }

  move({ x, y }: ToolPointer): void {
    if (this.handles.active) this.handles.to(x, y);
  }

  up(): void {
    if (this.handles.active) this.handles.release();
  }

  /** 0 skips the next point (not labelled); X cycles the visibility of the point just placed (2 → 1 → 0). */
  key(key: string): boolean {
    if (this.handles.active) return false;
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
    const next = this.nextName();
    const names = this.names;
    const progress = names ? ` (${this.points.length + 1} of ${names.length})` : '';
    return `Keypoints: click to place ${next ?? 'the next point'}${progress}; 0 skips it, X makes the last one occluded / not labelled, Enter saves`;
  }

  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void {
    const names = this.names;
    const edges = this.host.classId !== null ? (this.host.skeletonOf(this.host.classId)?.edges ?? []) : [];
    ctx.strokeStyle = color;
    ctx.lineWidth = 2 / s;
    ctx.beginPath();
    for (const [a, b] of edges) {
      const pa = this.points[a], pb = this.points[b];
      if (!pa || !pb || pa[2] === 0 || pb[2] === 0) continue;
      ctx.moveTo(pa[0], pa[1]);
      ctx.lineTo(pb[0], pb[1]);
    }
    ctx.stroke();
    const size = 11 / s;
    ctx.font = `${size}px sans-serif`;
    ctx.textBaseline = 'middle';
    this.points.forEach(([x, y, v], i) => {
      if (v === 0) return;
      ctx.fillStyle = color;
      if (v === 2) ctx.fillRect(x - 3 / s, y - 3 / s, 6 / s, 6 / s);
      else ctx.strokeRect(x - 3 / s, y - 3 / s, 6 / s, 6 / s);
      ctx.fillStyle = '#ffffff';
      ctx.fillText(names?.[i] ?? `${i + 1}`, x + 6 / s, y);
    });
    // The next point's name at the cursor: the annotator always knows what the click places.
    const next = this.nextName();
    if (next) {
      const w = ctx.measureText(next).width;
      ctx.fillStyle = 'rgba(0,0,0,0.7)';
      ctx.fillRect(cursor[0] + 10 / s, cursor[1] - size, w + 6 / s, size * 2);
      ctx.fillStyle = '#ffffff';
      ctx.fillText(next, cursor[0] + 13 / s, cursor[1]);
    }
  }
}
