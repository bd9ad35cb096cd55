import type { ImageLookup } from '../../access/image-lookup.repository.js';
import type { Executor } from '../../db/database.js';
import type { AssignmentsRepository } from '../assignments/assignments.repository.js';
import type { WorkItem, WorkItems } from '../workflow/work-items.ports.js';
import type { ImageLockHolder, LocksRepository } from './locks.repository.js';
import type { LockOut } from './locks.schemas.js';

/** Images as items of the team workflow: the image with its project's owner, the `assignments` table, `image_locks`. */
export class ImageItemsRepository implements WorkItems<WorkItem, LockOut, ImageLockHolder> {
  readonly noun = 'Image';

  constructor(
    private readonly images: ImageLookup,
    private readonly assignments: AssignmentsRepository,
    private readonly locks: LocksRepository,
  ) {}

  find(id: number): Promise<WorkItem | undefined> {
    return this.images.findWithOwner(id);
  }

  isAssigned(image: WorkItem, userId: number): Promise<boolean> {
    return this.assignments.isAssigned(image.id, userId);
  }

  findLock(imageId: number): Promise<LockOut | undefined> {
    return this.locks.find(imageId);
  }

  lockHolder(imageId: number, db?: Executor): Promise<ImageLockHolder | undefined> {
    return this.locks.findHolder(imageId, db);
  }

  acquireLock(imageId: number, userId: number, now: string, expiresAt: string): Promise<boolean> {
    return this.locks.acquire(imageId, userId, now, expiresAt);
  }

  releaseLock(imageId: number, userId: number | null): Promise<boolean> {
    return this.locks.release(imageId, userId);
  }
}
