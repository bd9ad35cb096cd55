/**
 * Near-duplicate groups over 64-bit dHashes without comparing every pair: multi-index hashing. The hash is cut into
 * c chunks; two hashes within `d` bits differ in at most ⌊d/c⌋ bits of at least one chunk (pigeonhole), so each hash
 * only meets the hashes filed under its chunks' values within that radius. The chunk count is chosen per distance
 * for the fewest bucket probes and comparisons: at d = 8, five chunks of 12–13 bits with radius 1 (14 probes per
 * chunk, about 12 hashes per bucket of 100,000) cost about half of four 16-bit chunks with radius 2 (137 probes).
 */
import { popcount32 } from '../../imaging/perceptual-hash.js';

export interface HashedImage {
  /** Index of the image in the caller's list. */
  index: number;
  high: number;
  low: number;
}

/** The most bits a near-duplicate query may allow. */
export const MAX_NEAR_DISTANCE = 15;

/**
 * Groups (each of at least two indexes, ascending, groups in order of their first index) linked within `maxDistance`.
 * `confirm`, given two items' `index`es, may refuse a pair the 64-bit hash found (the fine hash's second test).
 */
export function nearDuplicateGroups(items: readonly HashedImage[], maxDistance: number, confirm?: (a: number, b: number) => boolean): number[][] {
  const n = items.length;
  const high = new Int32Array(n);
  const low = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    high[i] = items[i].high;
    low[i] = items[i].low;
  }
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const chunks = chunkCount(n, maxDistance);
  const radius = Math.floor(maxDistance / chunks);
  const values = new Int32Array(n);
  const filed = new Int32Array(n);
  let start = 0;
  for (let c = 0; c < chunks; c++) {
    // Widths differ by at most one bit and add up to 64.
    const width = Math.floor(64 / chunks) + (c < 64 % chunks ? 1 : 0);
    const masks = Int32Array.from(neighbourMasks(width, radius));
    for (let i = 0; i < n; i++) values[i] = bits(high[i], low[i], start, width);
    start += width;
    // Items filed by chunk value (counting sort: offsets into one array), in index order within a value.
    const size = 1 << width;
    const offsets = new Int32Array(size + 1);
    for (let i = 0; i < n; i++) offsets[values[i] + 1]++;
    for (let v = 0; v < size; v++) offsets[v + 1] += offsets[v];
    const fill = offsets.slice(0, size);
    for (let i = 0; i < n; i++) filed[fill[values[i]]++] = i;
    for (let i = 0; i < n; i++) {
      const value = values[i];
      const ah = high[i];
      const al = low[i];
      for (let m = 0; m < masks.length; m++) {
        const key = value ^ masks[m];
        const end = offsets[key + 1];
        // Only the earlier items of a bucket are compared: each pair once, from its later member.
        for (let k = offsets[key]; k < end; k++) {
          const j = filed[k];
          if (j >= i) break;
          if (popcount32(ah ^ high[j]) + popcount32(al ^ low[j]) > maxDistance) continue;
          const ra = find(i);
          const rb = find(j);
          if (ra === rb || (confirm && !confirm(items[i].index, items[j].index))) continue;
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

/**
 * The chunk count (4 to 8: buckets of 2^8 to 2^16 values) with the least estimated work for n hashes: per item and
 * chunk, one probe per mask and one comparison per earlier hash in a probed bucket.
 */
function chunkCount(n: number, maxDistance: number): number {
  let best = 4;
  let bestCost = Infinity;
  for (let chunks = 4; chunks <= 8; chunks++) {
    const width = Math.floor(64 / chunks);
    const probes = neighbourMasks(width, Math.floor(maxDistance / chunks)).length;
    const cost = chunks * probes * (1 + n / (1 << width) / 2);
    if (cost < bestCost) [best, bestCost] = [chunks, cost];
  }
  return best;
}

/** Bits [start, start + width) of the 64-bit value high·2³² + low (width ≤ 16). */
function bits(high: number, low: number, start: number, width: number): number {
  const mask = (1 << width) - 1;
  if (start >= 32) return (high >>> (start - 32)) & mask;
  if (start + width <= 32) return (low >>> start) & mask;
  return ((low >>> start) | (high << (32 - start))) & mask;
}

/** Every mask of `width` bits with at most `radius` bits set. */
function neighbourMasks(width: number, radius: number): number[] {
  const out = [0];
  const extend = (mask: number, from: number, left: number) => {
    for (let bit = from; bit < width; bit++) {
      const next = mask | (1 << bit);
      out.push(next);
      if (left > 1) extend(next, bit + 1, left - 1);
    }
  };
  if (radius > 0) extend(0, 0, radius);
  return out;
}
