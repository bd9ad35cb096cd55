/**
 * Maps an async iterable with up to `concurrency` calls in flight and yields the results in input order. Readers use
 * it to overlap file reads (headers, label files) without holding more than a window of items in memory.
 */
export async function* orderedMap<T, R>(
  input: AsyncIterable<T> | Iterable<T>,
  concurrency: number,
  fn: (value: T) => Promise<R>,
): AsyncGenerator<R> {
  const window: Promise<R>[] = [];
  try {
    for await (const value of input) {
      const call = fn(value);
      // A call may fail while an earlier one is awaited; marked handled here, its error still surfaces when awaited.
      call.catch(() => undefined);
      window.push(call);
      if (window.length >= concurrency) yield await window.shift()!;
    }
    while (window.length > 0) yield await window.shift()!;
  } finally {
    // Rejections of calls still in flight when the consumer stops early must not surface as unhandled.
    for (const pending of window) pending.catch(() => undefined);
  }
}
