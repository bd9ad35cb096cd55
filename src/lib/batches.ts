/** The ways the code works through many items: slices of a list, a few at a time, and batches of a stream. */

/** `items` in slices of at most `size` (long IN lists and multi-row inserts stay below the drivers' parameter limits). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Runs `work` with at most `limit` calls in flight until `next` has nothing more (undefined), each worker taking
 * the next item as soon as it is free. Items come from a function so that they can be read lazily (a cursor).
 * The first failure stops every worker from taking another item; it is thrown once the calls in flight have
 * settled, so nothing is still running when the caller cleans up.
 */
export async function drainConcurrently<T>(limit: number, next: () => Promise<T | undefined> | T | undefined, work: (item: T) => Promise<void>): Promise<void> {
  const state: { failure?: { error: unknown } } = {};
  const worker = async () => {
    while (!state.failure) {
      try {
        const item = await next();
        if (item === undefined) return;
        await work(item);
      } catch (error) {
        state.failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  if (state.failure) throw state.failure.error;
}

/** `work` on every item of `items`, at most `limit` at a time (the first failure stops the rest, as above). */
export function forEachConcurrently<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let at = 0;
  return drainConcurrently(Math.min(limit, items.length), () => (at < items.length ? at++ : undefined), (index) => work(items[index], index));
}

/** `work`'s results for every item of `items`, in their order, computed at most `limit` at a time. */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  await forEachConcurrently(items, limit, async (item, index) => {
    results[index] = await work(item, index);
  });
  return results;
}

/**
 * The items of `source` gathered into batches of at most `size`, a batch closing early once `ms` have passed since
 * its first item came (checked as each item comes), so that per-batch work (one statement for many items) runs
 * often enough for progress to show. Leaving the loop early returns `source`.
 */
export async function* batchesOf<T>(source: AsyncIterable<T>, size: number, ms: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  let since = 0;
  for await (const item of source) {
    if (batch.length === 0) since = performance.now();
    batch.push(item);
    if (batch.length < size && performance.now() - since < ms) continue;
    yield batch;
    batch = [];
  }
  if (batch.length > 0) yield batch;
}

/**
 * Hands values back in sequence order (0, 1, 2 …) whatever order they arrive in: `put` returns the run of values now
 * ready, possibly none. Concurrent work whose results must be written in the order it was taken uses it.
 */
export class InOrder<T> {
  private readonly waiting = new Map<number, T>();
  private next = 0;

  put(sequence: number, value: T): T[] {
    this.waiting.set(sequence, value);
    const ready: T[] = [];
    for (; this.waiting.has(this.next); this.next++) {
      ready.push(this.waiting.get(this.next)!);
      this.waiting.delete(this.next);
    }
    return ready;
  }
}
