import type { Executor } from '../../db/database.js';

/** An item of team work (an image, a sample) as the workflow reads it: its project and that project's owner. */
export interface WorkItem {
  readonly id: number;
  readonly project_id: number;
  readonly owner_id: number;
}

/** A lock as writers see it: who holds it and until when. */
export interface HeldLock {
  readonly user_id: number;
  readonly email: string;
  readonly expires_at: string;
}

/**
 * How one kind of item stores what the team workflow needs. Each kind keeps its own tables (images: `assignments`,
 * `image_locks`; samples: columns of `samples`, `sample_locks`); the rules over them are ItemWorkflow's, written once.
 * `L` is the lock its GET answers, `H` the lock a refused write names (both at least a HeldLock).
 */
export interface WorkItems<I extends WorkItem, L extends HeldLock, H extends HeldLock> {
  /** Names the item in messages: "Image 3 not found", "Sample 3 is locked by …". */
  readonly noun: string;
  find(id: number): Promise<I | undefined>;
  /** Whether the item is assigned to the user (annotators kept to their assignments see only those). */
  isAssigned(item: I, userId: number): Promise<boolean>;
  findLock(id: number): Promise<L | undefined>;
  /** The lock a write checks, inside the write's transaction (`db`); it is the `lock` of the 409 that refuses it. */
  lockHolder(id: number, db?: Executor): Promise<H | undefined>;
  /** Takes the lock, or renews it for its holder, in one statement; false when another user's live lock holds it. */
  acquireLock(id: number, userId: number, now: string, expiresAt: string): Promise<boolean>;
  /** Removes the lock (only `userId`'s unless it is null); true when one went. */
  releaseLock(id: number, userId: number | null): Promise<boolean>;
}
