import type { Point } from '../geometry.js';
import { encodeRle, maskBounds, paintMask, stampDisc, type Bitmap } from '../mask.js';
import type { MaskEdit } from '../renderer.js';
import type { Tool, ToolHost, ToolPointer, ToolPreview } from './tool.js';

/**
 * Mask brush (paints 1) and eraser (paints 0): paints into the selected mask (the brush: or a new one of the current
 * class), saved on release.
 */
export class BrushTool implements Tool {
  readonly followsCursor = true;
  /** The mask being painted, drawn over the scene until the stroke ends. */
  private edit: MaskEdit | null = null;
  /** Where the pointer was last in the stroke. */
  private last: Point = [0, 0];
  private readonly value: 0 | 1;

  constructor(
    private readonly host: ToolHost,
    readonly name: 'brush' | 'eraser',
  ) {
    this.value = name === 'brush' ? 1 : 0;
  }

  /** Starts a stroke, unless there is nothing to paint into. */
  down({ x, y, button }: ToolPointer): void {
    if (button !== 0) return;
    const host = this.host;
    const { width, height } = host.image!;
    const selected = host.selectedKey !== null ? host.shape(host.selectedKey) : undefined;
    const editing = selected?.ann.annotation_type === 'mask' && selected.bitmap ? selected : undefined;
    if (!editing && this.value === 0) return host.message('Select a mask to erase from');
    if (!editing && host.classId === null) return host.message('Add a class first (project page → Classes)');
    const bitmap: Bitmap = editing ? { width, height, data: editing.bitmap!.data.slice() } : { width, height, data: new Uint8Array(width * height) };
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    if (editing) paintMask(canvas.getContext('2d')!, bitmap, { x: 0, y: 0, width, height }, host.colorOf(editing.ann.class_id));
    this.edit = { key: editing ? host.selectedKey : null, bitmap, canvas };
    this.last = [x, y];
    this.move({ x, y });
  }

  move({ x, y }: Pick<ToolPointer, 'x' | 'y'>): void {
    const edit = this.edit;
    if (!edit) return;
    const host = this.host;
    const color = host.colorOf(edit.key !== null ? host.shape(edit.key)!.ann.class_id : host.classId!);
    const ctx = edit.canvas.getContext('2d')!;
    const radius = host.brushSize / 2;
    const [lx, ly] = this.last;
    const steps = Math.max(1, Math.ceil(Math.hypot(x - lx, y - ly) / Math.max(1, radius / 2)));
    for (let i = 1; i <= steps; i++) {
      const px = lx + ((x - lx) * i) / steps, py = ly + ((y - ly) * i) / steps;
      const touched = stampDisc(edit.bitmap, px, py, radius, this.value);
      ctx.clearRect(touched.x, touched.y, touched.width, touched.height);
      paintMask(ctx, edit.bitmap, touched, color);
    }
    this.last = [x, y];
  }

  /** Ends the stroke: the mask is saved (an emptied mask is deleted). */
  up(): void {
    const edit = this.edit;
    this.edit = null;
    const store = this.host.store;
    if (!edit || !store) return;
    const bounds = maskBounds(edit.bitmap);
    if (edit.key !== null) {
      const s = this.host.shape(edit.key);
      if (!s) return;
      if (!bounds) store.delete(edit.key);
      else store.update(edit.key, { class_id: s.ann.class_id, annotation_type: 'mask', geometry: { rle: encodeRle(edit.bitmap), bbox: bounds } });
    } else if (bounds) {
      this.host.createWithClass({ annotation_type: 'mask', geometry: { rle: encodeRle(edit.bitmap), bbox: bounds } });
    }
  }

  reset(): void {
    this.edit = null;
  }

  preview(): ToolPreview | null {
    return this.edit ? { moving: null, maskEdit: this.edit } : null;
  }

  /** The brush's outline at the cursor (not while painting: the paint shows where it goes). */
  paintDraft(ctx: CanvasRenderingContext2D, s: number, color: string, cursor: Point): void {
    if (this.edit) return;
    ctx.lineWidth = 2 / s;
    ctx.beginPath();
    ctx.arc(cursor[0], cursor[1], this.host.brushSize / 2, 0, Math.PI * 2);
    ctx.strokeStyle = this.value === 0 ? '#ffffff' : color;
    ctx.stroke();
  }
}
