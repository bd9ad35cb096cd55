import { samPreview, type SamMask } from '../assist.js';
import { clampPoints, type Point } from '../geometry.js';
import type { Tool, ToolHost, ToolPointer } from './tool.js';

/** SAM click mode: the prompt points so far and the last previewed mask. */
interface SamSession {
  points: Point[];
  labels: (0 | 1)[];
  mask: SamMask | null;
  /** Answers to older clicks are dropped. */
  seq: number;
  busy: boolean;
}

/** SAM click mode: include (left) and exclude (right) points, a previewed mask, saved as a polygon on Enter. */
export class SamTool implements Tool {
  readonly name = 'sam';
  readonly followsCursor = false;
  private session: SamSession = { points: [], labels: [], mask: null, seq: 0, busy: false };

  constructor(private readonly host: ToolHost) {}

  reset(): void {
    this.session = { points: [], labels: [], mask: null, seq: this.session.seq + 1, busy: false };
  }

  summary(): { points: number; busy: boolean; score: number | null; hasMask: boolean } {
    const s = this.session;
    return { points: s.points.length, busy: s.busy, score: s.mask?.score ?? null, hasMask: s.mask !== null };
  }

  /** A left click includes its point, a right click excludes it. */
  down({ x, y, button }: ToolPointer): void {
    if (button !== 0 && button !== 2) return;
    const label = button === 0 ? 1 : 0;
    const { image, projectId } = this.host;
    if (!image || projectId === null) return;
    if (x < 0 || y < 0 || x > image.width || y > image.height) return;
    const sam = this.session;
    sam.points.push([x, y]);
    sam.labels.push(label);
    if (!sam.labels.includes(1)) {
      // Exclude points alone select nothing; wait for an include point.
      this.host.changed();
      return;
    }
    const seq = ++sam.seq;
    sam.busy = true;
    this.host.changed();
    samPreview(projectId, image.imageId, sam.points.slice(), sam.labels.slice()).then(
      (mask) => {
        if (this.session !== sam || sam.seq !== seq) return;
        sam.mask = mask;
        sam.busy = false;
        this.host.changed();
      },
      (err: Error) => {
        if (this.session !== sam || sam.seq !== seq) return;
        sam.busy = false;
        this.host.message(`SAM: ${err.message}`);
        this.host.changed();
      },
    );
  }

  /** Enter: saves the previewed mask as a polygon of the current class (its largest outer boundary). */
  commit(): void {
    const mask = this.session.mask;
    const image = this.host.image;
    if (!mask || this.session.busy || !image) return;
    const outline = mask.polygons[0];
    if (!outline || outline.length < 3) {
      this.host.message('The mask is empty: click inside the object');
      return;
    }
    this.host.createWithClass({ annotation_type: 'polygon', geometry: { points: clampPoints(outline, image.width, image.height) }, source: 'sam', confidence: null });
    this.reset();
    this.host.changed();
  }

  /** The previewed mask and the prompt points (green include, red exclude). */
  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string): void {
    const { mask, points, labels } = this.session;
    if (mask) {
      ctx.beginPath();
      for (const poly of mask.polygons) {
        poly.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
        ctx.closePath();
      }
      ctx.globalAlpha = 0.4;
      ctx.fillStyle = color;
      ctx.fill('evenodd');
      ctx.globalAlpha = 1;
      ctx.lineWidth = 2 / s;
      ctx.strokeStyle = color;
      ctx.stroke();
    }
    const r = 5 / s;
    points.forEach(([x, y], i) => {
      ctx.beginPath();
      ctx.arc(x, y, r, 0, Math.PI * 2);
      ctx.fillStyle = labels[i] === 1 ? '#2ecc71' : '#e74c3c';
      ctx.fill();
      ctx.lineWidth = 1.5 / s;
      ctx.strokeStyle = '#ffffff';
      ctx.stroke();
    });
  }
}
