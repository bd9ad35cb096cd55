import type { Caller } from '../../access/caller.js';
import type { ProjectAccess, ProjectOwnership } from '../../access/project-access.js';
import { roleAllows, type Permission, type ProjectRole } from '../../access/roles.js';
import type { Executor } from '../../db/database.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { HeldLock, WorkItem, WorkItems } from './work-items.ports.js';

/** How long a lock lives unless its holder renews it (the editors renew well within this). */
export const LOCK_TTL_MS = 60_000;

/** The state a review decision moves an item to. */
export const DECISION_STATUS = { approve: 'approved', reject: 'rejected', changes: 'changes' } as const;

/** A reviewer's decision as the routes receive it. */
export interface ReviewDecision {
  decision: keyof typeof DECISION_STATUS;
  comment?: string;
}

/**
 * The team workflow of one kind of item (images, samples): who may see an item (annotators kept to their
 * assignments see theirs only), its editing lock, the check every write makes against it, who may be assigned
 * work and what a review decision needs. The composition root builds one per kind over that kind's storage.
 */
export class ItemWorkflow<I extends WorkItem, L extends HeldLock, H extends HeldLock = L> {
  constructor(
    private readonly access: ProjectAccess,
    private readonly items: WorkItems<I, L, H>,
  ) {}

  /**
   * The item, when the caller holds `permission` in its project; 404 when it is missing or hidden, and for an
   * annotator kept to their assignments when it is not assigned to them.
   */
  async visible(caller: Caller, id: number, permission: Permission): Promise<I> {
    const item = await this.items.find(id);
    const notFound = `${this.items.noun} ${id} not found`;
    const project = item && { id: item.project_id, owner_id: item.owner_id };
    const role = await this.access.check(caller, project, permission, notFound);
    await this.assertAssigned(caller, project!, role, item!, notFound);
    return item!;
  }

  /** 404 (`notFound`) for an annotator kept to their assignments when the item is not assigned to them. */
  async assertAssigned(caller: Caller, project: ProjectOwnership, role: ProjectRole, item: I, notFound: string): Promise<void> {
    const restrictedTo = await this.access.assignedOnlyUser(caller, project, role);
    if (restrictedTo !== null && !(await this.items.isAssigned(item, restrictedTo))) throw new NotFoundError(notFound);
  }

  /** The current lock, or null when there is none or it has expired. */
  async getLock(caller: Caller, id: number): Promise<L | null> {
    await this.visible(caller, id, 'project.read');
    const lock = await this.items.findLock(id);
    return lock && lock.expires_at > new Date().toISOString() ? lock : null;
  }

  /** Takes or renews the caller's lock for LOCK_TTL_MS; 409 naming the holder and expiry when someone else holds it. */
  async acquireLock(caller: Caller, id: number): Promise<L> {
    await this.visible(caller, id, 'annotations.write');
    const now = new Date();
    const taken = await this.items.acquireLock(id, caller.userId, now.toISOString(), new Date(now.getTime() + LOCK_TTL_MS).toISOString());
    const lock = await this.items.findLock(id);
    if (!taken && lock) throw this.locked(id, lock);
    return lock!;
  }

  /** Releases the caller's own lock; `force` breaks anyone's (project admins). Releasing no lock is not an error. */
  async releaseLock(caller: Caller, id: number, force: boolean): Promise<void> {
    await this.visible(caller, id, force ? 'locks.break' : 'project.read');
    if (force) {
      await this.items.releaseLock(id, null);
      return;
    }
    if (await this.items.releaseLock(id, caller.userId)) return;
    const lock = await this.items.findLock(id);
    if (lock && lock.expires_at > new Date().toISOString()) throw this.locked(id, lock, '; project admins can break it with force=true');
  }

  /**
   * Refuses a write (409 naming the holder) while another user's lock on the item lives. Writers call it inside the
   * transaction of the write (`db`), so a lock taken before the write commits is seen.
   */
  async assertWritable(caller: Caller, id: number, db?: Executor): Promise<void> {
    const holder = await this.blockingHolder(caller.userId, id, db);
    if (holder) throw this.locked(id, holder);
  }

  /** The live lock of another user than `userId` on the item, or null when `userId` may write to it. */
  async blockingHolder(userId: number, id: number, db?: Executor): Promise<H | null> {
    const holder = await this.items.lockHolder(id, db);
    if (!holder || holder.user_id === userId || holder.expires_at <= new Date().toISOString()) return null;
    return holder;
  }

  /** 422 unless the user is a member of the project whose role may annotate (who may be assigned work). */
  async assertAssignable(project: ProjectOwnership, userId: number): Promise<void> {
    const role = await this.access.roleOf({ userId, isAdmin: false } as Caller, project);
    if (!role) throw ValidationError.at(['body', 'user_id'], `User ${userId} is not a member of project ${project.id}`);
    if (!roleAllows(role, 'annotations.write')) throw ValidationError.at(['body', 'user_id'], `User ${userId} is a ${role} and cannot annotate`);
  }

  private locked(id: number, lock: HeldLock, hint = ''): ConflictError {
    return new ConflictError(`${this.items.noun} ${id} is locked by ${lock.email} until ${lock.expires_at}${hint}`, { lock });
  }
}

/** The workflow of any kind of item, for callers that use only what is the same for every kind. */
export type AnyItemWorkflow = ItemWorkflow<WorkItem, HeldLock, HeldLock>;

/** What a review decision sets: the new state and the trimmed comment; `changes` needs a comment (422). */
export function reviewDecision(input: ReviewDecision): { state: (typeof DECISION_STATUS)[ReviewDecision['decision']]; comment: string } {
  const comment = input.comment?.trim() ?? '';
  if (input.decision === 'changes' && !comment) throw ValidationError.at(['body', 'comment'], 'Say what should change', 'missing');
  return { state: DECISION_STATUS[input.decision], comment };
}
