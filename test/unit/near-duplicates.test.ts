import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nearDuplicateGroups, MAX_NEAR_DISTANCE, type HashedImage } from '../../src/modules/quality/near-duplicates.logic.js';
import { popcount32 } from '../../src/imaging/perceptual-hash.js';

/** The groups by comparing every pair (union-find), for checking the multi-index search. */
function bruteForce(items: HashedImage[], d: number): number[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  for (let i = 0; i < items.length; i++) {
    for (let j = 0; j < i; j++) {
      if (popcount32(items[i].high ^ items[j].high) + popcount32(items[i].low ^ items[j].low) <= d) parent[Math.max(find(i), find(j))] = Math.min(find(i), find(j));
    }
  }
  const groups = new Map<number, number[]>();
  items.forEach((item, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), item.index]));
  return [...groups.values()].filter((g) => g.length > 1).map((g) => g.sort((a, b) => a - b)).sort((a, b) => a[0] - b[0]);
}

describe('near-duplicate groups', () => {
  it('finds exactly the groups a comparison of every pair finds, at every distance', () => {
    let state = 7;
    const rand = () => (state = (Math.imul(state, 1103515245) + 12345) | 0) >>> 0;
    for (let d = 0; d <= MAX_NEAR_DISTANCE; d++) {
      const items: HashedImage[] = [];
      for (let i = 0; i < 600; i++) {
        if (i > 0 && rand() % 3 === 0) {
          // A near copy of an earlier hash: up to d + 2 bits flipped, anywhere in the 64 (across the chunk borders).
          const base = items[rand() % items.length];
          let { high, low } = base;
          for (let flips = rand() % (d + 3); flips > 0; flips--) {
            const bit = rand() % 64;
            if (bit < 32) low ^= 1 << bit;
            else high ^= 1 << (bit - 32);
          }
          items.push({ index: i * 2, high: high | 0, low: low | 0 });
        } else {
          items.push({ index: i * 2, high: rand() | 0, low: rand() | 0 });
        }
      }
      assert.deepEqual(nearDuplicateGroups(items, d), bruteForce(items, d), `distance ${d}`);
    }
  });
});
