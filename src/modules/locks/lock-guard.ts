import type { Caller } from '../../access/caller.js';
import type { Executor } from '../../db/database.js';
import { ConflictError } from '../../http/errors.js';
import type { LocksRepository } from './locks.repository.js';

/**
 * Refuses writes to an image that another user has locked and whose lock has not expired. Writers call it inside
 * the transaction of the write, so a lock taken before the write commits is seen (no write slips past a lock).
 */
export class LockGuard {
  constructor(private readonly locks: LocksRepository) {}

  async assertWritable(caller: Caller, imageId: number, db?: Executor): Promise<void> {
    const holder = await this.locks.findHolder(imageId, db);
    if (!holder || holder.user_id === caller.userId || holder.expires_at <= new Date().toISOString()) return;
    throw new ConflictError(`Image ${imageId} is locked by ${holder.email} until ${holder.expires_at}`, {
      lock: { image_id: imageId, user_id: holder.user_id, email: holder.email, expires_at: holder.expires_at },
    });
  }
}
