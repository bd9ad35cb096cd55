import { translate } from '../geometry.js';
import type { Moving } from '../renderer.js';
import { HandleDrag } from './handle-drag.js';
import type { Tool, ToolHost, ToolPointer, ToolPreview } from './tool.js';

/**
 * Click selects the shape under the pointer (the smallest; clicking the selected shape again selects the next one
 * stacked under the pointer, round and round); a drag moves it (masks stay put), a handle reshapes it.
 */
export class SelectTool implements Tool {
  readonly name = 'select';
  readonly followsCursor = false;
  private moving: (Moving & { x0: number; y0: number }) | null = null;
  /** The press landed on the shape already selected: a click (no drag) then cycles to the next one under it. */
  private onSelected = false;
  private readonly handles: HandleDrag;

  constructor(private readonly host: ToolHost) {
    this.handles = new HandleDrag(host);
  }

  down({ x, y, button }: ToolPointer): void {
    if (button !== 0 || this.handles.grab(x, y)) return;
    const under = this.host.shapesAt(x, y);
    const selected = this.host.selectedKey;
    this.onSelected = selected !== null && under.includes(selected);
    const key = this.onSelected ? selected : (under[0] ?? null);
    this.host.selectKey(key);
    if (key !== null) this.moving = { key, x0: x, y0: y, dx: 0, dy: 0 };
  }

  move({ x, y }: ToolPointer): void {
    if (this.handles.active) this.handles.to(x, y);
    else if (this.moving) {
      this.moving.dx = x - this.moving.x0;
      this.moving.dy = y - this.moving.y0;
    }
  }

  up(): void {
    if (this.handles.active) return this.handles.release();
    const m = this.moving;
    this.moving = null;
    const { store, image } = this.host;
    if (m && m.dx === 0 && m.dy === 0 && this.onSelected) {
      this.onSelected = false;
      return this.host.selectKey(this.host.nextShapeAt(m.x0, m.y0));
    }
    const s = m ? this.host.shape(m.key) : undefined;
    if (!m || !s || !store || !image || (m.dx === 0 && m.dy === 0) || s.ann.annotation_type === 'mask') return;
    store.update(m.key, { class_id: s.ann.class_id, annotation_type: s.ann.annotation_type, geometry: translate(s.ann, m.dx, m.dy, image.width, image.height) });
  }

  reset(): void {
    this.moving = null;
    this.onSelected = false;
    this.handles.reset();
  }

  preview(): ToolPreview | null {
    return this.moving || this.handles.active ? { moving: this.moving, maskEdit: null } : null;
  }
}
