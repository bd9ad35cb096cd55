import type { Db, Tx } from './database.js';
import { retryOnConflict } from './errors.js';

interface Pending {
  unit: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for small, frequent writes (annotating): units of work from concurrent requests share one
 * transaction, because a commit costs more than the few rows written inside it (on SQLite a WAL append, and a
 * checkpoint with fsync every few hundred commits; on PostgreSQL a WAL flush).
 *
 * One batch runs at a time; units arriving meanwhile form the next one, so batches grow with the load and a lone
 * request waits only one turn of the event loop. If the shared transaction fails, every unit of the batch is run
 * again in a transaction of its own, so a unit only ever fails for its own reasons and a failed unit writes nothing.
 * Units must therefore only write through `tx` (they may run twice).
 */
export class WriteBatcher {
  private queue: Pending[] = [];
  private busy = false;
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 256,
  ) {}

  run<T>(unit: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ unit, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.busy || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // Let the requests already read from the sockets in this turn join the batch.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.busy = true;
    const batch = this.queue.splice(0, this.maxBatch);
    try {
      if (batch.length === 1) {
        await this.runAlone(batch[0]);
        return;
      }
      let results: unknown[];
      try {
        results = await this.db.transaction().execute(async (tx) => {
          const out: unknown[] = [];
          for (const pending of batch) out.push(await pending.unit(tx));
          return out;
        });
      } catch {
        for (const pending of batch) await this.runAlone(pending);
        return;
      }
      batch.forEach((pending, i) => pending.resolve(results[i]));
    } finally {
      this.busy = false;
      this.schedule();
    }
  }

  private async runAlone(pending: Pending): Promise<void> {
    try {
      pending.resolve(await retryOnConflict(() => this.db.transaction().execute(pending.unit)));
    } catch (err) {
      pending.reject(err);
    }
  }
}
