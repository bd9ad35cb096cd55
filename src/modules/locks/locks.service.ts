import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { Permission } from '../../access/roles.js';
import { ConflictError } from '../../http/errors.js';
import type { AssignmentScope } from '../assignments/assignment-scope.js';
import type { ImageLookup } from '../../access/image-lookup.repository.js';
import type { LocksRepository } from './locks.repository.js';
import type { LockOut } from './locks.schemas.js';

/** How long a lock lives unless its holder renews it (the editor renews well within this). */
export const LOCK_TTL_MS = 60_000;

export class LocksService {
  constructor(
    private readonly locks: LocksRepository,
    private readonly access: ProjectAccess,
    /** An image outside an annotator's assignments (assigned-only projects) is not found for them. */
    private readonly scope: AssignmentScope,
    private readonly images: ImageLookup,
  ) {}

  /** The current lock, or null when there is none or it has expired. */
  async get(caller: Caller, imageId: number): Promise<LockOut | null> {
    await this.image(caller, imageId, 'project.read');
    const lock = await this.locks.find(imageId);
    return lock && lock.expires_at > new Date().toISOString() ? lock : null;
  }

  /** Takes or renews the caller's lock; 409 naming the holder and expiry when someone else holds it. */
  async acquire(caller: Caller, imageId: number): Promise<LockOut> {
    await this.image(caller, imageId, 'annotations.write');
    const now = new Date();
    const taken = await this.locks.acquire(imageId, caller.userId, now.toISOString(), new Date(now.getTime() + LOCK_TTL_MS).toISOString());
    const lock = await this.locks.find(imageId);
    if (!taken && lock) {
      throw new ConflictError(`Image ${imageId} is locked by ${lock.email} until ${lock.expires_at}`, { lock });
    }
    return lock!;
  }

  /** Releases the caller's own lock; `force` breaks anyone's (project admins). Releasing no lock is not an error. */
  async release(caller: Caller, imageId: number, force: boolean): Promise<void> {
    await this.image(caller, imageId, force ? 'locks.break' : 'project.read');
    if (force) {
      await this.locks.release(imageId, null);
      return;
    }
    if (await this.locks.release(imageId, caller.userId)) return;
    const lock = await this.locks.find(imageId);
    if (lock && lock.expires_at > new Date().toISOString()) {
      throw new ConflictError(`Image ${imageId} is locked by ${lock.email} until ${lock.expires_at}; project admins can break it with force=true`, { lock });
    }
  }

  private async image(caller: Caller, imageId: number, permission: Permission) {
    const image = await this.images.findWithOwner(imageId);
    const project = image && { id: image.project_id, owner_id: image.owner_id };
    const role = await this.access.check(caller, project, permission, `Image ${imageId} not found`);
    await this.scope.assertImage(caller, project!, role, imageId, `Image ${imageId} not found`);
    return image!;
  }
}
