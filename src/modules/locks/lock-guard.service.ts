import type { Caller } from '../../access/caller.js';
import type { Executor } from '../../db/database.js';
import { ConflictError } from '../../http/errors.js';
import type { ItemWorkflow } from '../workflow/item-workflow.service.js';
import type { WorkItem } from '../workflow/work-items.ports.js';
import type { ImageLockHolder, LockScope, LocksRepository } from './locks.repository.js';
import type { LockOut } from './locks.schemas.js';

/** The team workflow (visibility, locks, assignees, review decisions) over images. */
export type ImageWorkflow = ItemWorkflow<WorkItem, LockOut, ImageLockHolder>;

/** Locks a bulk refusal names in its detail; the body's `locks` lists more. */
const NAMED_IN_DETAIL = 5;

/**
 * Refuses writes to images that other users have locked: one image through the images' team workflow (the rule
 * samples share), or every image a bulk write touches at once. Writers call it inside the transaction of the write,
 * so a lock taken before the write commits is seen (no write slips past a lock).
 */
export class LockGuard {
  constructor(
    private readonly locks: LocksRepository,
    private readonly workflow: ImageWorkflow,
  ) {}

  assertWritable(caller: Caller, imageId: number, db?: Executor): Promise<void> {
    return this.workflow.assertWritable(caller, imageId, db);
  }

  /** The live lock of another user than `userId` on the image, or null when `userId` may write to it. */
  blockingHolder(userId: number, imageId: number, db?: Executor): Promise<ImageLockHolder | null> {
    return this.workflow.blockingHolder(userId, imageId, db);
  }

  /**
   * For bulk writes (image bulk delete, split changes, cascading class delete): refuses the whole request with 409
   * when any image it touches is locked by another user, naming the images and their holders, so nothing changes.
   */
  async assertNoneLocked(caller: Caller, scope: LockScope, db?: Executor): Promise<void> {
    const held = await this.locks.heldByOthers(scope, caller.userId, new Date().toISOString(), db);
    if (held.length === 0) return;
    const named = held.slice(0, NAMED_IN_DETAIL).map((l) => `image ${l.image_id} by ${l.email} until ${l.expires_at}`).join(', ');
    const more = held.length > NAMED_IN_DETAIL ? ` and ${held.length - NAMED_IN_DETAIL} more` : '';
    const what = held.length === 1 ? 'An image is' : `${held.length} images are`;
    throw new ConflictError(`${what} locked by other users (${named}${more}); nothing was changed`, {
      locks: held.map((l) => ({ image_id: l.image_id, user_id: l.user_id, email: l.email, expires_at: l.expires_at })),
    });
  }
}
