/** Synthetic images with known coloured shapes for the recipe tests, drawn into raw RGB buffers. */
import sharp from 'sharp';
import type { Bitmap } from '../../src/imaging/rle.js';
import type { RecipeAnnotation } from '../../src/imaging/recipe/index.js';

export type Rgb = [number, number, number];
export const RED: Rgb = [255, 0, 0];
export const GREEN: Rgb = [0, 255, 0];
export const BLUE: Rgb = [0, 0, 255];
export const GREY: Rgb = [110, 110, 110];

export interface Canvas {
  width: number;
  height: number;
  data: Buffer;
}

export function canvas(width: number, height: number, fill: Rgb = GREY): Canvas {
  const data = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) data.set(fill, i * 3);
  return { width, height, data };
}

export function fillRect(c: Canvas, x: number, y: number, w: number, h: number, colour: Rgb): void {
  for (let j = y; j < y + h; j++) for (let i = x; i < x + w; i++) c.data.set(colour, (j * c.width + i) * 3);
}

/** Paints the pixels whose centres lie inside the triangle and returns them as a mask. */
export function fillTriangle(c: Canvas, points: [number, number][], colour: Rgb): Bitmap {
  const data = new Uint8Array(c.width * c.height);
  const [a, b, p] = points;
  const side = (u: [number, number], v: [number, number], x: number, y: number) => (v[0] - u[0]) * (y - u[1]) - (v[1] - u[1]) * (x - u[0]);
  for (let j = 0; j < c.height; j++) {
    for (let i = 0; i < c.width; i++) {
      const x = i + 0.5;
      const y = j + 0.5;
      const s1 = side(a, b, x, y);
      const s2 = side(b, p, x, y);
      const s3 = side(p, a, x, y);
      if ((s1 >= 0 && s2 >= 0 && s3 >= 0) || (s1 <= 0 && s2 <= 0 && s3 <= 0)) {
        data[j * c.width + i] = 1;
        c.data.set(colour, (j * c.width + i) * 3);
      }
    }
  }
  return { width: c.width, height: c.height, data };
}

export async function encode(c: Canvas, format: 'png' | 'jpeg' = 'png', orientation?: number): Promise<Buffer> {
  let image = sharp(c.data, { raw: { width: c.width, height: c.height, channels: 3 } });
  if (orientation) image = image.withMetadata({ orientation });
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 95 }).toBuffer();
}

export async function decode(image: Buffer): Promise<Canvas> {
  const { data, info } = await sharp(image).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

/** Pixels close to `colour` (blended edge pixels are not counted). */
export function colourPixels(c: Canvas, colour: Rgb, tolerance = 90): Bitmap {
  const data = new Uint8Array(c.width * c.height);
  for (let i = 0; i < c.width * c.height; i++) {
    const dr = c.data[i * 3] - colour[0];
    const dg = c.data[i * 3 + 1] - colour[1];
    const db = c.data[i * 3 + 2] - colour[2];
    if (dr * dr + dg * dg + db * db < tolerance * tolerance) data[i] = 1;
  }
  return { width: c.width, height: c.height, data };
}

export function count(mask: Bitmap): number {
  let n = 0;
  for (const v of mask.data) n += v;
  return n;
}

export function centroid(mask: Bitmap): [number, number] {
  let sx = 0;
  let sy = 0;
  let n = 0;
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      if (mask.data[y * mask.width + x]) {
        sx += x + 0.5;
        sy += y + 0.5;
        n++;
      }
    }
  }
  return [sx / n, sy / n];
}

export function iou(a: Bitmap, b: Bitmap): number {
  let inter = 0;
  let union = 0;
  for (let i = 0; i < a.data.length; i++) {
    if (a.data[i] && b.data[i]) inter++;
    if (a.data[i] || b.data[i]) union++;
  }
  return union === 0 ? 1 : inter / union;
}

/** Share of the mask's pixels whose centres lie inside the box grown by `grow` pixels. */
export function shareInsideBox(mask: Bitmap, box: { x: number; y: number; width: number; height: number }, grow = 1.5): number {
  let inside = 0;
  let n = 0;
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      if (!mask.data[y * mask.width + x]) continue;
      n++;
      const cx = x + 0.5;
      const cy = y + 0.5;
      if (cx >= box.x - grow && cx <= box.x + box.width + grow && cy >= box.y - grow && cy <= box.y + box.height + grow) inside++;
    }
  }
  return n === 0 ? 1 : inside / n;
}

export function pointInPolygon([x, y]: [number, number], points: [number, number][]): boolean {
  let inside = false;
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
    const [xi, yi] = points[i];
    const [xj, yj] = points[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

export type TestAnnotation = RecipeAnnotation & { label: string };
