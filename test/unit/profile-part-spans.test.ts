import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { partSpans } from '../../src/modules/profile/profile-parts.service.js';

/** Which spans of parts a profile computes for its stale parts (profile-parts.service.ts). */
describe('profile part spans', () => {
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it('computes nothing when nothing is stale', () => {
    assert.deepEqual(partSpans(range(0, 9), new Set()), []);
  });

  it('keeps runs of adjacent stale parts apart from the clean parts between them', () => {
    assert.deepEqual(partSpans([0, 1, 4], new Set([0, 4])), [[0, 0], [4, 4]]);
    assert.deepEqual(partSpans([0, 1, 4, 9], new Set([1, 4])), [[1, 4]], 'parts 2 and 3 hold none of the project\'s images: 1 and 4 are one run');
    assert.deepEqual(partSpans([2, 7, 8], new Set([2, 8])), [[2, 2], [8, 8]]);
    assert.deepEqual(partSpans([2, 7], new Set([2, 7])), [[2, 7]], 'adjacent in the project\'s order');
  });

  it('computes a whole project in one span', () => {
    const parts = range(0, 99);
    assert.deepEqual(partSpans(parts, new Set(parts)), [[0, 99]]);
  });

  it('makes many runs one span rather than a query set per run', () => {
    const parts = range(0, 39);
    assert.deepEqual(partSpans(parts, new Set(parts.filter((p) => p % 4 === 0 && p < 34))), [[0, 32]], 'more than eight runs: from the first stale part to the last');
    assert.deepEqual(partSpans(parts, new Set([0, 2, 3, 9])), [[0, 0], [2, 3], [9, 9]], 'a few runs: one span each');
  });
});
