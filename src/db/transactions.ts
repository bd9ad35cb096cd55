import type { Db, Tx } from './database.js';

/**
 * The one transaction style. A repository runs its own multi-statement writes in a transaction it opens; a service
 * whose unit of work spans several repositories asks for one here and passes `tx` to each repository call. Services
 * never hold the raw database.
 */
export interface Transactions {
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

export function transactionsOf(db: Db): Transactions {
  return { run: (work) => db.transaction().execute(work) };
}
