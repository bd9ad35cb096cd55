import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Caller } from '../../src/access/caller.js';
import type { ProjectAccess } from '../../src/access/project-access.js';
import { roleAllows, type Permission, type ProjectRole } from '../../src/access/roles.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../src/http/errors.js';
import { ItemWorkflow, LOCK_TTL_MS, reviewDecision } from '../../src/modules/workflow/item-workflow.service.js';
import type { HeldLock, WorkItem, WorkItems } from '../../src/modules/workflow/work-items.ports.js';

// The team workflow's rules, once, over a kind of item kept in memory: what images and samples both rely on.

type Item = WorkItem & { assignee: number | null };
type Lock = HeldLock & { item_id: number };

const EMAILS: Record<number, string> = { 1: 'owner@x', 2: 'ann@x', 3: 'other@x', 4: 'viewer@x' };
const ROLES: Record<number, ProjectRole> = { 1: 'owner', 2: 'annotator', 3: 'annotator', 4: 'viewer' };
const caller = (userId: number) => ({ userId, isAdmin: false }) as Caller;

function world(assignedOnly = false) {
  const items = new Map<number, Item>([[10, { id: 10, project_id: 1, owner_id: 1, assignee: 2 }], [11, { id: 11, project_id: 1, owner_id: 1, assignee: null }]]);
  const locks = new Map<number, Lock>();
  const store: WorkItems<Item, Lock, Lock> = {
    noun: 'Thing',
    find: async (id) => items.get(id),
    isAssigned: async (item, userId) => item.assignee === userId,
    findLock: async (id) => locks.get(id),
    lockHolder: async (id) => locks.get(id),
    async acquireLock(id, userId, now, expiresAt) {
      const held = locks.get(id);
      if (held && held.user_id !== userId && held.expires_at > now) return false;
      locks.set(id, { item_id: id, user_id: userId, email: EMAILS[userId], expires_at: expiresAt });
      return true;
    },
    async releaseLock(id, userId) {
      const held = locks.get(id);
      if (!held || (userId !== null && held.user_id !== userId)) return false;
      return locks.delete(id);
    },
  };
  const access = {
    async roleOf(c: Caller) {
      return ROLES[c.userId] ?? null;
    },
    async check(c: Caller, project: unknown, permission: Permission, notFound: string) {
      const role = ROLES[c.userId];
      if (!project || !role) throw new NotFoundError(notFound);
      if (!roleAllows(role, permission)) throw new ForbiddenError(`not allowed: ${permission}`);
      return role;
    },
    async assignedOnlyUser(c: Caller, _project: unknown, role: ProjectRole) {
      return assignedOnly && role === 'annotator' ? c.userId : null;
    },
  } as unknown as ProjectAccess;
  return { workflow: new ItemWorkflow(access, store), locks };
}

const rejects = async (work: Promise<unknown>, type: new (...args: never[]) => Error, message?: RegExp) => {
  const err = await work.then(() => null, (e: unknown) => e);
  assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
  if (message) assert.match((err as Error).message, message);
  return err as Error & { extra?: Record<string, unknown> };
};

describe('the team workflow over items', () => {
  it('hides missing items, and items not assigned to an annotator kept to their assignments', async () => {
    const open = world().workflow;
    await rejects(open.visible(caller(2), 99, 'project.read'), NotFoundError, /^Thing 99 not found$/);
    assert.equal((await open.visible(caller(2), 11, 'project.read')).id, 11);
    const kept = world(true).workflow;
    assert.equal((await kept.visible(caller(2), 10, 'annotations.write')).id, 10);
    await rejects(kept.visible(caller(2), 11, 'project.read'), NotFoundError, /^Thing 11 not found$/);
    assert.equal((await kept.visible(caller(1), 11, 'project.read')).id, 11);
  });

  it('locks an item for its holder: others get 409 naming the holder, writes are refused, locks expire, admins break them', async () => {
    const { workflow, locks } = world();
    const before = Date.now();
    const lock = await workflow.acquireLock(caller(2), 10);
    assert.equal(lock.user_id, 2);
    assert.ok(Date.parse(lock.expires_at) >= before + LOCK_TTL_MS);
    assert.deepEqual(await workflow.getLock(caller(3), 10), lock);
    const refused = await rejects(workflow.acquireLock(caller(3), 10), ConflictError, /^Thing 10 is locked by ann@x until /);
    assert.deepEqual(refused.extra, { lock });
    await workflow.assertWritable(caller(2), 10);
    const write = await rejects(workflow.assertWritable(caller(3), 10), ConflictError, /^Thing 10 is locked by ann@x/);
    assert.deepEqual(write.extra, { lock });
    assert.deepEqual(await workflow.blockingHolder(3, 10), lock);
    await rejects(workflow.releaseLock(caller(3), 10, false), ConflictError, /project admins can break it with force=true$/);
    await rejects(workflow.releaseLock(caller(3), 10, true), ForbiddenError);
    await rejects(workflow.acquireLock(caller(4), 10), ForbiddenError);

    locks.set(10, { ...lock, expires_at: new Date(Date.now() - 1).toISOString() });
    assert.equal(await workflow.getLock(caller(3), 10), null);
    assert.equal(await workflow.blockingHolder(3, 10), null);
    await workflow.assertWritable(caller(3), 10);
    await workflow.releaseLock(caller(3), 10, false);
    assert.equal((await workflow.acquireLock(caller(3), 10)).user_id, 3);
    await workflow.releaseLock(caller(1), 10, true);
    assert.equal(locks.size, 0);
  });

  it('assigns work only to members who may annotate', async () => {
    const { workflow } = world();
    await workflow.assertAssignable({ id: 1, owner_id: 1 }, 2);
    await rejects(workflow.assertAssignable({ id: 1, owner_id: 1 }, 99), ValidationError, /User 99 is not a member of project 1/);
    await rejects(workflow.assertAssignable({ id: 1, owner_id: 1 }, 4), ValidationError, /User 4 is a viewer and cannot annotate/);
  });

  it('needs a comment to ask for changes, and maps decisions to review states', () => {
    assert.deepEqual(reviewDecision({ decision: 'approve' }), { state: 'approved', comment: '' });
    assert.deepEqual(reviewDecision({ decision: 'reject', comment: '  blurry ' }), { state: 'rejected', comment: 'blurry' });
    assert.deepEqual(reviewDecision({ decision: 'changes', comment: 'fix the box' }), { state: 'changes', comment: 'fix the box' });
    assert.throws(() => reviewDecision({ decision: 'changes', comment: '  ' }), /Say what should change/);
  });
});
