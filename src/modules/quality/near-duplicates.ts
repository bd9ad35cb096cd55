/**
 * Near-duplicate groups over 64-bit dHashes without comparing every pair: multi-index hashing. The hash is cut into
 * four 16-bit chunks; two hashes within `d` bits differ in at most ⌊d/4⌋ bits of at least one chunk (pigeonhole),
 * so each hash only meets the hashes filed under its chunks' values within ⌊d/4⌋ bits. At d = 8 that is 4 × 137
 * bucket probes per image instead of n comparisons, which keeps 100,000 images well under a second.
 */
import { popcount32 } from '../splits/assign.js';

export interface HashedImage {
  /** Index of the image in the caller's list. */
  index: number;
  high: number;
  low: number;
}

/** The most bits a near-duplicate query may allow (per-chunk radius 3: 697 probes per chunk). */
export const MAX_NEAR_DISTANCE = 15;

/** Groups (each of at least two indexes, ascending, groups in order of their first index) linked within `maxDistance`. */
export function nearDuplicateGroups(items: readonly HashedImage[], maxDistance: number): number[][] {
  const n = items.length;
  const chunkOf = (item: HashedImage, c: number) => (c < 2 ? item.high >>> (16 * (1 - c)) : item.low >>> (16 * (3 - c))) & 0xffff;
  const radius = Math.floor(maxDistance / 4);
  const masks = neighbourMasks(radius);
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (let c = 0; c < 4; c++) {
    // Items filed by chunk value (counting sort: offsets into one array).
    const start = new Int32Array(65537);
    for (let i = 0; i < n; i++) start[chunkOf(items[i], c) + 1]++;
    for (let v = 0; v < 65536; v++) start[v + 1] += start[v];
    const filed = new Int32Array(n);
    const fill = start.slice(0, 65536);
    for (let i = 0; i < n; i++) filed[fill[chunkOf(items[i], c)]++] = i;
    for (let i = 0; i < n; i++) {
      const a = items[i];
      const value = chunkOf(a, c);
      for (const mask of masks) {
        const key = value ^ mask;
        for (let k = start[key]; k < start[key + 1]; k++) {
          const j = filed[k];
          if (j <= i) continue;
          const b = items[j];
          if (popcount32(a.high ^ b.high) + popcount32(a.low ^ b.low) > maxDistance) continue;
          const ra = find(i);
          const rb = find(j);
          if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
        }
      }
    }
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = find(i);
    if (root === i && !groups.has(i)) continue;
    const list = groups.get(root) ?? [items[root].index];
    if (root !== i) list.push(items[i].index);
    groups.set(root, list);
  }
  return [...groups.values()].filter((g) => g.length > 1).map((g) => g.sort((x, y) => x - y)).sort((x, y) => x[0] - y[0]);
}

/** Every 16-bit mask with at most `radius` bits set. */
function neighbourMasks(radius: number): number[] {
  const out = [0];
  const extend = (mask: number, from: number, left: number) => {
    for (let bit = from; bit < 16; bit++) {
      const next = mask | (1 << bit);
      out.push(next);
      if (left > 1) extend(next, bit + 1, left - 1);
    }
  };
  if (radius > 0) extend(0, 0, radius);
  return out;
}
