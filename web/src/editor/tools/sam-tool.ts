import { samPreview } from '../assist.js';
import { clampPoints } from '../geometry.js';
import type { SamSession } from '../renderer.js';
import type { ToolHost } from './tool-host.js';

/** SAM click mode: include (left) and exclude (right) points, a previewed mask, saved as a polygon on Enter. */
export class SamTool {
  session: SamSession = { points: [], labels: [], mask: null, seq: 0, busy: false };

  constructor(private readonly host: ToolHost) {}

  reset(): void {
    this.session = { points: [], labels: [], mask: null, seq: this.session.seq + 1, busy: false };
  }

  summary(): { points: number; busy: boolean; score: number | null; hasMask: boolean } {
    const s = this.session;
    return { points: s.points.length, busy: s.busy, score: s.mask?.score ?? null, hasMask: s.mask !== null };
  }

  addPoint(x: number, y: number, label: 0 | 1): void {
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

  /** Saves the previewed mask as a polygon of the current class (its largest outer boundary). */
  accept(): void {
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
}
