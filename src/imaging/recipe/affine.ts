/**
 * 2-D affine maps in continuous pixel coordinates: pixel (i, j) covers [i, i+1) × [j, j+1), so its centre is
 * (i + 0.5, j + 0.5) and an image of width w spans [0, w]. x' = a·x + b·y + e, y' = c·x + d·y + f.
 */
export interface Affine {
  a: number;
  b: number;
  c: number;
  d: number;
  e: number;
  f: number;
}

import type { Point } from '../geometry.js';

export type { Point };

export const IDENTITY: Affine = Object.freeze({ a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 });

export function translate(tx: number, ty: number): Affine {
  return { a: 1, b: 0, c: 0, d: 1, e: tx, f: ty };
}

export function scale(sx: number, sy: number = sx): Affine {
  return { a: sx, b: 0, c: 0, d: sy, e: 0, f: 0 };
}

/** `first` then `second` (matrix product second × first). */
export function then(first: Affine, second: Affine): Affine {
  return {
    a: second.a * first.a + second.b * first.c,
    b: second.a * first.b + second.b * first.d,
    c: second.c * first.a + second.d * first.c,
    d: second.c * first.b + second.d * first.d,
    e: second.a * first.e + second.b * first.f + second.e,
    f: second.c * first.e + second.d * first.f + second.f,
  };
}

/** Compose left to right: chain(m1, m2, m3) applies m1 first. */
export function chain(...maps: Affine[]): Affine {
  return maps.reduce((acc, m) => then(acc, m), IDENTITY);
}

export function invert(m: Affine): Affine {
  const det = m.a * m.d - m.b * m.c;
  if (Math.abs(det) < 1e-12) throw new Error('affine map is not invertible');
  const a = m.d / det;
  const b = -m.b / det;
  const c = -m.c / det;
  const d = m.a / det;
  return { a, b, c, d, e: -(a * m.e + b * m.f), f: -(c * m.e + d * m.f) };
}

export function apply(m: Affine, [x, y]: Point): Point {
  return [m.a * x + m.b * y + m.e, m.c * x + m.d * y + m.f];
}

/** Clockwise rotation (y points down) by `degrees` about (cx, cy). */
export function rotateAbout(degrees: number, cx: number, cy: number): Affine {
  const r = (degrees * Math.PI) / 180;
  const cos = Math.cos(r);
  const sin = Math.sin(r);
  return chain(translate(-cx, -cy), { a: cos, b: -sin, c: sin, d: cos, e: 0, f: 0 }, translate(cx, cy));
}

/** Shear about (cx, cy): x moves by tan(xDegrees)·(y − cy), y by tan(yDegrees)·(x − cx). */
export function shearAbout(xDegrees: number, yDegrees: number, cx: number, cy: number): Affine {
  const kx = Math.tan((xDegrees * Math.PI) / 180);
  const ky = Math.tan((yDegrees * Math.PI) / 180);
  return chain(translate(-cx, -cy), { a: 1, b: kx, c: ky, d: 1, e: 0, f: 0 }, translate(cx, cy));
}

export function isTranslationOnly(m: Affine): boolean {
  return m.a === 1 && m.b === 0 && m.c === 0 && m.d === 1;
}

export interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Bounding box of a w × h image's outline mapped through m. */
export function mappedBounds(m: Affine, width: number, height: number): Rect {
  const corners = [apply(m, [0, 0]), apply(m, [width, 0]), apply(m, [0, height]), apply(m, [width, height])];
  const xs = corners.map((p) => p[0]);
  const ys = corners.map((p) => p[1]);
  const left = Math.min(...xs);
  const top = Math.min(...ys);
  return { left, top, width: Math.max(...xs) - left, height: Math.max(...ys) - top };
}
