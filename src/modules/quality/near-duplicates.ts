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
  const high = new Int32Array(n);
  const low = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    high[i] = items[i].high;
    low[i] = items[i].low;
  }
  const masks = Int32Array.from(neighbourMasks(Math.floor(maxDistance / 4)));
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const chunk = new Uint16Array(n);
  const start = new Int32Array(65537);
  const fill = new Int32Array(65536);
  const filed = new Int32Array(n);
  for (let c = 0; c < 4; c++) {
    const word = c < 2 ? high : low;
    const shift = c % 2 === 0 ? 16 : 0;
    for (let i = 0; i < n; i++) chunk[i] = (word[i] >>> shift) & 0xffff;
    // Items filed by chunk value (counting sort: offsets into one array).
    start.fill(0);
    for (let i = 0; i < n; i++) start[chunk[i] + 1]++;
    for (let v = 0; v < 65536; v++) start[v + 1] += start[v];
    fill.set(start.subarray(0, 65536));
    for (let i = 0; i < n; i++) filed[fill[chunk[i]]++] = i;
    for (let i = 0; i < n; i++) {
      const value = chunk[i];
      const ah = high[i];
      const al = low[i];
      for (let m = 0; m < masks.length; m++) {
        const key = value ^ masks[m];
        const end = start[key + 1];
        // A bucket lists its items in index order: only the earlier ones are compared (each pair once, from its
        // later member).
        for (let k = start[key]; k < end; k++) {
          const j = filed[k];
          if (j >= i) break;
          if (popcount32(ah ^ high[j]) + popcount32(al ^ low[j]) > maxDistance) continue;
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
