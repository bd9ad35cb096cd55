/** The two ways the code works through many items: slices of a list, and a few at a time. */

/** `items` in slices of at most `size` (long IN lists and multi-row inserts stay below the drivers' parameter limits). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Runs `work` with at most `limit` calls in flight until `next` has nothing more (undefined), each worker taking
 * the next item as soon as it is free. Items come from a function so that they can be read lazily (a cursor).
 */
export async function drainConcurrently<T>(limit: number, next: () => Promise<T | undefined> | T | undefined, work: (item: T) => Promise<void>): Promise<void> {
  const worker = async () => {
    for (let item = await next(); item !== undefined; item = await next()) await work(item);
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
}

/** `work` on every item of `items`, at most `limit` at a time. */
export function forEachConcurrently<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let at = 0;
  return drainConcurrently(Math.min(limit, items.length), () => (at < items.length ? at++ : undefined), (index) => work(items[index], index));
}
