import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { forEachConcurrently, mapConcurrently } from '../../src/lib/batches.js';

test('mapConcurrently keeps the items\' order and never has more than `limit` calls in flight', async () => {
  let running = 0;
  let most = 0;
  const out = await mapConcurrently([5, 1, 4, 2, 3, 0], 3, async (ms, index) => {
    most = Math.max(most, ++running);
    await sleep(ms * 2);
    running--;
    return `${index}:${ms}`;
  });
  assert.deepEqual(out, ['0:5', '1:1', '2:4', '3:2', '4:3', '5:0']);
  assert.equal(most, 3);
  assert.deepEqual(await mapConcurrently([], 4, async () => 1), []);
});

test('the first failure stops taking items and is thrown only once the calls in flight have settled', async () => {
  const started: number[] = [];
  const settled: number[] = [];
  await assert.rejects(
    forEachConcurrently([0, 1, 2, 3, 4, 5, 6, 7], 2, async (item) => {
      started.push(item);
      if (item === 1) throw new Error('item 1 failed');
      await sleep(20);
      settled.push(item);
    }),
    /item 1 failed/,
  );
  // Item 0 was in flight when item 1 failed: it finished before the rejection; no worker took another item after it.
  assert.deepEqual(settled, [0]);
  assert.deepEqual(started, [0, 1]);
});
