import type { Skeleton } from '../types.js';
import type { Point } from './geometry.js';
import type { Rect } from './spatial-index.js';

/**
 * Where a class's skeleton template puts its points in a box, for placing a whole skeleton with one drag: one row
 * per step along the edges from the first point (a skeleton listed head first stands upright), each part not joined
 * to the others in rows below; in a row, the first of each flip pair on the right and its partner mirrored on the
 * left (a person facing the camera: `left_*` on the image's right), unpaired points between them.
 */
export function skeletonLayout(skeleton: Pick<Skeleton, 'points' | 'edges' | 'flip_pairs'>, box: Rect): Point[] {
  const n = skeleton.points.length;
  const next: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of skeleton.edges ?? []) {
    next[a].push(b);
    next[b].push(a);
  }
  const depth = new Array<number>(n).fill(-1);
  let rows = 0;
  for (let root = 0; root < n; root++) {
    if (depth[root] >= 0) continue;
    depth[root] = rows;
    for (const queue = [root]; queue.length; ) {
      const i = queue.shift()!;
      rows = Math.max(rows, depth[i] + 1);
      for (const j of next[i]) if (depth[j] < 0) queue.push(j), (depth[j] = depth[i] + 1);
    }
  }
  const side = new Array<number>(n).fill(0);
  for (const [a, b] of skeleton.flip_pairs ?? []) {
    side[a] = 1;
    side[b] = -1;
    // A pair stands in one row, so the two are mirror images.
    depth[a] = depth[b] = Math.min(depth[a], depth[b]);
  }
  const out: Point[] = new Array(n);
  for (let row = 0; row < rows; row++) {
    const inRow = [...Array(n).keys()].filter((i) => depth[i] === row);
    // Left side outermost first, then the middle, then the right side innermost first.
    const ordered = [...inRow.filter((i) => side[i] < 0).reverse(), ...inRow.filter((i) => side[i] === 0), ...inRow.filter((i) => side[i] > 0)];
    ordered.forEach((i, k) => {
      out[i] = [box.x + ((k + 0.5) / ordered.length) * box.width, box.y + ((row + 0.5) / rows) * box.height];
    });
  }
  return out;
}
