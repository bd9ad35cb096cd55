import type { Bitmap } from '../imaging/rle.js';

import { signedPolygonArea, type Point } from '../imaging/geometry.js';

export type { Point };

export interface PolygonOptions {
  /** Douglas–Peucker tolerance in pixels; 0 keeps every corner. */
  epsilon?: number;
  /** Polygons enclosing less area than this (in square pixels) are dropped as noise. */
  minArea?: number;
}

// Directions in image coordinates (y down), clockwise: +x, +y, -x, -y.
const DX = [1, 0, -1, 0];
const DY = [0, 1, 0, -1];

/**
 * Outer boundaries of a binary mask as polygons, largest first. The tracer follows the cracks between pixels, so
 * vertices sit on pixel corners and a polygon encloses exactly its pixels (a lone pixel at (3, 4) becomes the unit
 * square (3, 4)–(4, 5)); diagonal neighbours belong to one region (8-connectivity). Holes are not returned: a
 * polygon cannot carry them, the RLE mask does.
 */
export function maskToPolygons(mask: Bitmap, options: PolygonOptions = {}): Point[][] {
  const epsilon = options.epsilon ?? 1;
  const minArea = options.minArea ?? 1;
  const polygons: { points: Point[]; area: number }[] = [];
  for (const loop of traceBoundaries(mask)) {
    const area = signedPolygonArea(loop);
    if (area < minArea) continue;
    const points = epsilon > 0 ? simplifyClosed(loop, epsilon) : loop;
    if (points.length >= 3) polygons.push({ points, area });
  }
  return polygons.sort((a, b) => b.area - a.area).map((p) => p.points);
}

/** Every closed boundary: outer ones run clockwise on screen (positive area), holes the other way. */
export function traceBoundaries(mask: Bitmap): Point[][] {
  const { width, height, data } = mask;
  const fg = (x: number, y: number) => x >= 0 && y >= 0 && x < width && y < height && data[y * width + x] !== 0;
  // Whether the crack leaving corner (x, y) in direction d has foreground on its right and background on its left.
  const hasEdge = (x: number, y: number, d: number): boolean => {
    switch (d) {
      case 0: return fg(x, y) && !fg(x, y - 1);
      case 1: return fg(x - 1, y) && !fg(x, y);
      case 2: return fg(x - 1, y - 1) && !fg(x - 1, y);
      default: return fg(x, y - 1) && !fg(x - 1, y - 1);
    }
  };
  const stride = width + 1;
  const visited = new Uint8Array(stride * (height + 1));
  const loops: Point[][] = [];
  for (let sy = 0; sy < height; sy++) {
    for (let sx = 0; sx < width; sx++) {
      if (!data[sy * width + sx] || (visited[sy * stride + sx] & 1) || !hasEdge(sx, sy, 0)) continue;
      const points: Point[] = [[sx, sy]];
      let x = sx;
      let y = sy;
      let d = 0;
      for (;;) {
        visited[y * stride + x] |= 1 << d;
        x += DX[d];
        y += DY[d];
        let next = -1;
        // Left before straight before right: at a saddle this joins diagonal neighbours into one region.
        for (const candidate of [(d + 3) & 3, d, (d + 1) & 3]) {
          if (!(visited[y * stride + x] & (1 << candidate)) && hasEdge(x, y, candidate)) {
            next = candidate;
            break;
          }
        }
        if (next === -1) break;
        if (next !== d) points.push([x, y]);
        d = next;
      }
      loops.push(points);
    }
  }
  return loops;
}

/** Douglas–Peucker on a closed loop: split at the vertex farthest from the first, simplify both chains. */
export function simplifyClosed(points: readonly Point[], epsilon: number): Point[] {
  if (points.length <= 4) return [...points];
  let far = 0;
  let farDistance = -1;
  for (let i = 1; i < points.length; i++) {
    const distance = (points[i][0] - points[0][0]) ** 2 + (points[i][1] - points[0][1]) ** 2;
    if (distance > farDistance) {
      far = i;
      farDistance = distance;
    }
  }
  const first = simplifyChain(points.slice(0, far + 1), epsilon);
  const second = simplifyChain([...points.slice(far), points[0]], epsilon);
  return [...first.slice(0, -1), ...second.slice(0, -1)];
}

function simplifyChain(points: readonly Point[], epsilon: number): Point[] {
  const keep = new Uint8Array(points.length);
  keep[0] = 1;
  keep[points.length - 1] = 1;
  const stack: [number, number][] = [[0, points.length - 1]];
  while (stack.length > 0) {
    const [start, end] = stack.pop()!;
    let index = -1;
    let max = epsilon;
    for (let i = start + 1; i < end; i++) {
      const distance = distanceToSegment(points[i], points[start], points[end]);
      if (distance > max) {
        index = i;
        max = distance;
      }
    }
    if (index !== -1) {
      keep[index] = 1;
      stack.push([start, index], [index, end]);
    }
  }
  return points.filter((_, i) => keep[i]);
}

function distanceToSegment([px, py]: Point, [ax, ay]: Point, [bx, by]: Point): number {
  const dx = bx - ax;
  const dy = by - ay;
  const lengthSquared = dx * dx + dy * dy;
  const t = lengthSquared === 0 ? 0 : Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / lengthSquared));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}
