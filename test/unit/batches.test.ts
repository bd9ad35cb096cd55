import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { batchesOf, forEachConcurrently, InOrder, mapConcurrently } from '../../src/lib/batches.js';

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

test('batchesOf gathers at most `size` items, closes a batch once `ms` have passed since its first item, and returns the source when left early', async () => {
  async function* counted(n: number, delayMs: (i: number) => number, log: string[]) {
    try {
      for (let i = 0; i < n; i++) {
        await sleep(delayMs(i));
        yield i;
      }
    } finally {
      log.push('returned');
    }
  }
  const collect = async (source: AsyncIterable<number>, size: number, ms: number) => {
    const out: number[][] = [];
    for await (const batch of batchesOf(source, size, ms)) out.push(batch);
    return out;
  };
  assert.deepEqual(await collect(counted(7, () => 0, []), 3, 10_000), [[0, 1, 2], [3, 4, 5], [6]]);
  // Item 2 comes 60 ms after item 0: the first batch closes with it, short of its size.
  assert.deepEqual(await collect(counted(5, (i) => (i === 2 ? 60 : 0), []), 10, 40), [[0, 1, 2], [3, 4]]);
  const log: string[] = [];
  for await (const batch of batchesOf(counted(100, () => 0, log), 2, 10_000)) if (batch[0] === 2) break;
  assert.deepEqual(log, ['returned']);
});

test('InOrder hands values back in sequence order, each once, as soon as the ones before them have come', () => {
  const order = new InOrder<string>();
  assert.deepEqual(order.put(2, 'c'), []);
  assert.deepEqual(order.put(1, 'b'), []);
  assert.deepEqual(order.put(0, 'a'), ['a', 'b', 'c']);
  assert.deepEqual(order.put(4, 'e'), []);
  assert.deepEqual(order.put(3, 'd'), ['d', 'e']);
  assert.deepEqual(order.put(5, 'f'), ['f']);
});
