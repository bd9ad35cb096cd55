import type { Point } from '../geometry.js';
import { encodeRle, maskBounds, paintMask, stampDisc, type Bitmap } from '../mask.js';
import type { MaskEdit } from '../renderer.js';
import type { ToolHost } from './tool-host.js';

/** A brush stroke in progress: the value it paints and where the pointer was last. */
export interface Stroke {
  value: 0 | 1;
  last: Point;
}

/** Mask brush and eraser: paints into the selected mask (or a new one of the current class), saved on release. */
export class BrushTool {
  /** The mask being painted, drawn over the scene until the stroke ends. */
  edit: MaskEdit | null = null;

  constructor(private readonly host: ToolHost) {}

  /** Starts a stroke (1 paints, 0 erases); null when there is nothing to paint into. */
  begin(x: number, y: number, value: 0 | 1): Stroke | null {
    const host = this.host;
    const { width, height } = host.image!;
    const selected = host.selectedKey !== null ? host.shape(host.selectedKey) : undefined;
    const editing = selected?.ann.annotation_type === 'mask' && selected.bitmap ? selected : undefined;
    if (!editing && value === 0) {
      host.message('Select a mask to erase from');
      return null;
    }
    if (!editing && host.classId === null) {
      host.message('Add a class first (project page → Classes)');
      return null;
    }
    const bitmap: Bitmap = editing ? { width, height, data: editing.bitmap!.data.slice() } : { width, height, data: new Uint8Array(width * height) };
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    if (editing) paintMask(canvas.getContext('2d')!, bitmap, { x: 0, y: 0, width, height }, host.colorOf(editing.ann.class_id));
    this.edit = { key: editing ? host.selectedKey : null, bitmap, canvas };
    const stroke: Stroke = { value, last: [x, y] };
    this.paintTo(x, y, stroke);
    return stroke;
  }

  paintTo(x: number, y: number, stroke: Stroke): void {
    const edit = this.edit;
    if (!edit) return;
    const host = this.host;
    const color = host.colorOf(edit.key !== null ? host.shape(edit.key)!.ann.class_id : host.classId!);
    const ctx = edit.canvas.getContext('2d')!;
    const radius = host.brushSize / 2;
    const steps = Math.max(1, Math.ceil(Math.hypot(x - stroke.last[0], y - stroke.last[1]) / Math.max(1, radius / 2)));
    for (let i = 1; i <= steps; i++) {
      const px = stroke.last[0] + ((x - stroke.last[0]) * i) / steps, py = stroke.last[1] + ((y - stroke.last[1]) * i) / steps;
      const touched = stampDisc(edit.bitmap, px, py, radius, stroke.value);
      ctx.clearRect(touched.x, touched.y, touched.width, touched.height);
      paintMask(ctx, edit.bitmap, touched, color);
    }
    stroke.last = [x, y];
  }

  /** Ends the stroke: the mask is saved (an emptied mask is deleted). */
  end(): void {
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
}
