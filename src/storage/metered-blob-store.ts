import type { Readable } from 'node:stream';
import type { Metrics } from '../lib/metrics.js';
import type { BlobStore, StoredBlob } from './blob-store.js';

/**
 * A BlobStore that times every operation of the store it wraps and counts the failures (versa_blob_operation_*), by
 * operation. A stream is timed until it closes (so its time includes the reader's pace) and counted failed when it errors.
 */
export class MeteredBlobStore implements BlobStore {
  readonly localPath?: (key: string) => string | null;

  constructor(
    private readonly inner: BlobStore,
    private readonly metrics: Metrics,
  ) {
    // Only stores that keep files have one: callers test for it.
    if (inner.localPath) this.localPath = inner.localPath.bind(inner);
  }

  put(key: string, data: Buffer | Uint8Array): Promise<void> {
    return this.metrics.blob('put', () => this.inner.put(key, data));
  }

  putStream(key: string, data: Readable): Promise<number> {
    return this.metrics.blob('putStream', () => this.inner.putStream(key, data));
  }

  get(key: string): Promise<Buffer> {
    return this.metrics.blob('get', () => this.inner.get(key));
  }

  stream(key: string, range?: { start: number; end: number }): Readable {
    const settle = this.timer('stream');
    let stream: Readable;
    try {
      stream = this.inner.stream(key, range);
    } catch (error) {
      settle(true);
      throw error;
    }
    stream.once('error', () => settle(true));
    stream.once('close', () => settle(false));
    return stream;
  }

  size(key: string): Promise<number | null> {
    return this.metrics.blob('size', () => this.inner.size(key));
  }

  delete(key: string): Promise<void> {
    return this.metrics.blob('delete', () => this.inner.delete(key));
  }

  deletePrefix(prefix: string): Promise<void> {
    return this.metrics.blob('deletePrefix', () => this.inner.deletePrefix(prefix));
  }

  /** Timed until the listing is read to its end (or abandoned). */
  async *list(prefix: string): AsyncIterable<StoredBlob> {
    const settle = this.timer('list');
    try {
      yield* this.inner.list(prefix);
    } catch (error) {
      settle(true);
      throw error;
    } finally {
      settle(false);
    }
  }

  removeUnfinishedWrites(beforeMs: number): Promise<number> {
    return this.metrics.blob('removeUnfinishedWrites', () => this.inner.removeUnfinishedWrites(beforeMs));
  }

  /** Starts timing an operation that ends later; call the answer once it has (a second call changes nothing). */
  private timer(operation: string): (failed: boolean) => void {
    let settle: (failed: boolean) => void = () => undefined;
    void this.metrics.blob(operation, () => new Promise<void>((resolve, reject) => (settle = (failed) => (failed ? reject(new Error(`${operation} failed`)) : resolve())))).catch(() => undefined);
    return settle;
  }
}
