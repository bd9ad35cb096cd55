import { PostgresAdapter, sql } from 'kysely';
import type { Executor, Tx } from './database.js';

/** The first half of the two-integer advisory lock keys taken here (the second is the project's id). */
const PROJECT_IMAGES_LOCK = 0x1_8e57;

/**
 * Holds the project's image-write lock until the transaction ends: an upload that looks for bytes the project already
 * has and then records the new image, and an import that pairs its entries with the project's images, take it first,
 * so that two of them never both find "not there yet" and both add the same bytes (no unique constraint does it: two
 * images of a project may share their bytes since an import keeps every entry of its dataset, issue 18).
 *
 * PostgreSQL: a transaction-scoped advisory lock, taken before any row lock so that it never joins a deadlock cycle.
 * SQLite: nothing to take; the one connection runs one transaction at a time, and a transaction of another process
 * that wrote meanwhile makes SQLite refuse this one's stale write (SQLITE_BUSY_SNAPSHOT) rather than let it through.
 */
export async function lockProjectImages(tx: Tx, projectId: number): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select pg_advisory_xact_lock(cast(${PROJECT_IMAGES_LOCK} as integer), cast(${projectId} as integer))`.execute(tx);
}

/** The advisory lock key of the training queue's decisions (who may queue another run, which runs are admitted). */
const TRAINING_QUEUE_LOCK = 0x1_8e58;

/**
 * Holds the training queue's lock until the transaction ends, so that two processes never both count a free slot (a
 * project's, or an account's queued allowance) and both take it. PostgreSQL: an advisory lock; SQLite: nothing, for
 * the reason given at lockProjectImages.
 */
export async function lockTrainingQueue(tx: Tx): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select pg_advisory_xact_lock(cast(${TRAINING_QUEUE_LOCK} as integer), 0)`.execute(tx);
}

/** The first half of the advisory lock keys of login throttle keys (the second is a hash of the key). */
const LOGIN_FAILURES_LOCK = 0x1_8e59;

/**
 * Holds one login throttle key's lock until the transaction ends, so that parallel attempts of one address, on any
 * API process, are admitted one at a time against its failure count. PostgreSQL: an advisory lock; SQLite: nothing,
 * for the reason given at lockProjectImages.
 */
export async function lockLoginFailures(tx: Tx, key: string): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select pg_advisory_xact_lock(cast(${LOGIN_FAILURES_LOCK} as integer), hashtext(${key}))`.execute(tx);
}

/** The first half of the advisory lock keys of quality-control dealing (the second is the project's id). */
const QC_DEALING_LOCK = 0x1_8e5a;

/**
 * Holds the project's quality-control dealing lock until the transaction ends (issue 29), so that two annotators asking
 * for their next task at once never both count the same free overlap slot and both take it, and one annotator's two
 * requests never open two tasks. PostgreSQL: an advisory lock; SQLite: nothing, for the reason given at
 * lockProjectImages.
 */
export async function lockQualityDealing(tx: Tx, projectId: number): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select pg_advisory_xact_lock(cast(${QC_DEALING_LOCK} as integer), cast(${projectId} as integer))`.execute(tx);
}

/** The first half of the advisory lock keys of an image's class (the second is the image's id). */
const IMAGE_CLASS_LOCK = 0x1_8e5b;

/**
 * Holds an image's class lock until the transaction ends (issue 30), so that two writes giving an image of a
 * single-label project its class never both find "no class yet" and both add one. PostgreSQL: an advisory lock;
 * SQLite: nothing, for the reason given at lockProjectImages.
 */
export async function lockImageClass(tx: Executor, imageId: number): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select pg_advisory_xact_lock(cast(${IMAGE_CLASS_LOCK} as integer), cast(${imageId} as integer))`.execute(tx);
}
