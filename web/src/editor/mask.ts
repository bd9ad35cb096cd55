import type { Rle } from '../types.js';
import type { Rect } from './spatial-index.js';

/** A binary mask, row-major, one byte per pixel. */
export interface Bitmap {
  width: number;
  height: number;
  data: Uint8Array;
}

/** COCO uncompressed RLE: runs alternate background/foreground, column-major, starting with background. */
export function decodeRle(rle: Rle): Bitmap {
  const [height, width] = rle.size;
  const data = new Uint8Array(width * height);
  let p = 0;
  for (let i = 0; i < rle.counts.length; i++) {
    const run = rle.counts[i];
    if (i % 2 === 1) {
      for (let k = p; k < p + run; k++) data[(k % height) * width + Math.floor(k / height)] = 1;
    }
    p += run;
  }
  return { width, height, data };
}

export function encodeRle(mask: Bitmap): Rle {
  const { width, height, data } = mask;
  const counts: number[] = [];
  let current = 0;
  let run = 0;
  for (let x = 0; x < width; x++)
    for (let y = 0; y < height; y++) {
      const v = data[y * width + x];
      if (v !== current) {
        counts.push(run);
        run = 0;
        current = v;
      }
      run++;
    }
  counts.push(run);
  return { size: [height, width], counts };
}

export function maskBounds(mask: Bitmap): Rect | null {
  let x0 = Infinity, y0 = Infinity, x1 = -1, y1 = -1;
  const { width, height, data } = mask;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++)
      if (data[row + x]) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        y1 = y;
      }
  }
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** Sets (or clears) a disc of pixels; returns the touched rectangle. */
export function stampDisc(mask: Bitmap, cx: number, cy: number, radius: number, value: 0 | 1): Rect {
  const x0 = Math.max(0, Math.floor(cx - radius)), x1 = Math.min(mask.width - 1, Math.ceil(cx + radius));
  const y0 = Math.max(0, Math.floor(cy - radius)), y1 = Math.min(mask.height - 1, Math.ceil(cy + radius));
  const r2 = radius * radius;
  for (let y = y0; y <= y1; y++)
    for (let x = x0; x <= x1; x++) {
      const dx = x + 0.5 - cx, dy = y + 0.5 - cy;
      if (dx * dx + dy * dy <= r2) mask.data[y * mask.width + x] = value;
    }
  return { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** Paints the mask's pixels inside `region` in a colour onto a canvas whose top-left is `origin` in image pixels. */
export function paintMask(ctx: CanvasRenderingContext2D, mask: Bitmap, region: Rect, color: string, origin = { x: 0, y: 0 }): void {
  if (region.width <= 0 || region.height <= 0) return;
  const r = parseInt(color.slice(1, 3), 16), g = parseInt(color.slice(3, 5), 16), b = parseInt(color.slice(5, 7), 16);
  const img = ctx.createImageData(region.width, region.height);
  for (let y = 0; y < region.height; y++)
    for (let x = 0; x < region.width; x++) {
      if (!mask.data[(region.y + y) * mask.width + region.x + x]) continue;
      const o = (y * region.width + x) * 4;
      img.data[o] = r;
      img.data[o + 1] = g;
      img.data[o + 2] = b;
      img.data[o + 3] = 255;
    }
  ctx.putImageData(img, region.x - origin.x, region.y - origin.y);
}
