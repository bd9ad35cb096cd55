/**
 * Drill (issue 11, High 4): a project admin cannot attach the project to their own organization; only the owner (or
 * the instance admin) moves a project between organizations, and only into one they own or administer; admins
 * through the organization are listed among the members with that source; the owner can always detach it, and the
 * derived access ends with that.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('moving projects between organizations', () => {
  let t: TestApp;
  let owner: User;
  let admin: User;
  before(async () => {
    t = await startTestApp();
    await t.user();
    owner = await t.user();
    admin = await t.user();
  });
  after(() => t.close());

  it('a project admin cannot attach the project to their organization; the owner can, and can always detach it', async () => {
    const projectId = (await owner.post('/api/projects', { name: 'moved' })).body.id;
    assert.equal((await owner.post(`/api/projects/${projectId}/members`, { user_id: admin.id, role: 'admin' })).status, 201);
    const adminsOrg = (await admin.post('/api/orgs', { name: 'admin org' })).body.id;
    const takeover = await admin.patch(`/api/projects/${projectId}`, { org_id: adminsOrg });
    assert.equal(takeover.status, 403, JSON.stringify(takeover.body));
    assert.equal((await owner.get(`/api/projects/${projectId}`)).body.org_id, null);
    // Into an organization the owner does not manage: refused too.
    assert.equal((await owner.patch(`/api/projects/${projectId}`, { org_id: adminsOrg })).status, 422);

    const ownersOrg = (await owner.post('/api/orgs', { name: 'owner org' })).body.id;
    assert.equal((await owner.post(`/api/orgs/${ownersOrg}/members`, { user_id: admin.id, role: 'owner' })).status, 201);
    assert.equal((await owner.patch(`/api/projects/${projectId}`, { org_id: ownersOrg })).status, 200);
    // The admin leaves the member list but stays admin through the organization, and is listed with that source.
    assert.equal((await owner.delete(`/api/projects/${projectId}/members/${admin.id}`)).status, 204);
    const members = (await owner.get(`/api/projects/${projectId}/members`)).body as { user_id: number; role: string; source: string; org_id?: number }[];
    const derived = members.find((m) => m.user_id === admin.id);
    assert.ok(derived, 'the organization admin is listed');
    assert.equal(derived.role, 'admin');
    assert.equal(derived.source, 'organization');
    assert.equal(derived.org_id, ownersOrg);
    assert.equal((await admin.patch(`/api/projects/${projectId}`, { description: 'still admin' })).status, 200);

    // The org's other owner demotes the project owner to a plain member: the owner still detaches the project.
    assert.equal((await admin.patch(`/api/orgs/${ownersOrg}/members/${owner.id}`, { role: 'member' })).status, 200);
    const detached = await owner.patch(`/api/projects/${projectId}`, { org_id: null });
    assert.equal(detached.status, 200, JSON.stringify(detached.body));
    assert.equal((await admin.get(`/api/projects/${projectId}`)).status, 404, 'the derived access is gone');
    assert.ok(!(await owner.get(`/api/projects/${projectId}/members`)).body.some((m: { user_id: number }) => m.user_id === admin.id));
  });
});
