import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('teams: roles, project members, organizations, token scopes', () => {
  let t: TestApp;
  let owner: User;
  let bob: User;
  let carol: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // the instance admin sees everything; keep it out of the way
    owner = await t.user();
    bob = await t.user();
    carol = await t.user();
  });
  after(() => t.close());

  const project = async (by: User = owner) => (await by.post('/api/projects', { name: 'team project' })).body.id as number;
  const memberRows = async () => Number((await t.versa.deps.db.selectFrom('project_members').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('lists the role catalog with permissions', async () => {
    const res = await bob.get('/api/identity/roles');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.map((r: { name: string }) => r.name), ['owner', 'admin', 'reviewer', 'annotator', 'viewer']);
    const viewer = res.body.find((r: { name: string }) => r.name === 'viewer');
    assert.ok(viewer.permissions.includes('project.read'));
    assert.ok(!viewer.permissions.includes('annotations.write'));
    assert.equal((await t.client().get('/api/identity/roles')).status, 401);
  });

  it('adds a member by email, who then sees the project with that role', async () => {
    const id = await project();
    assert.equal((await bob.get(`/api/projects/${id}`)).status, 404);
    const added = await owner.post(`/api/projects/${id}/members`, { email: bob.email.toUpperCase(), role: 'viewer' });
    assert.equal(added.status, 201);
    assert.equal(added.body.user_id, bob.id);
    assert.equal(added.body.role, 'viewer');
    assert.equal((await bob.get(`/api/projects/${id}`)).status, 200);
    assert.ok((await bob.get('/api/projects')).body.some((p: { id: number }) => p.id === id));
    assert.equal((await bob.get('/api/stats')).body.project_count, 1);
    // A viewer may read but not write.
    assert.equal((await bob.post(`/api/projects/${id}/classes`, { name: 'car' })).status, 403);
    const list = await bob.get(`/api/projects/${id}/members`);
    assert.deepEqual(list.body.map((m: { user_id: number; role: string }) => [m.user_id, m.role]), [[owner.id, 'owner'], [bob.id, 'viewer']]);
  });

  it('changes a role and removes a member at once; refuses bad member input without changing anything', async () => {
    const id = await project();
    await owner.post(`/api/projects/${id}/members`, { user_id: bob.id, role: 'viewer' });
    const changed = await owner.patch(`/api/projects/${id}/members/${bob.id}`, { role: 'admin' });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.role, 'admin');
    assert.equal((await bob.post(`/api/projects/${id}/classes`, { name: 'car' })).status, 201);
    const before = await memberRows();
    assert.equal((await owner.post(`/api/projects/${id}/members`, { user_id: bob.id, role: 'viewer' })).status, 409);
    assert.equal((await owner.post(`/api/projects/${id}/members`, { user_id: owner.id, role: 'viewer' })).status, 409);
    const unknown = await owner.post(`/api/projects/${id}/members`, { email: 'nobody@example.com', role: 'viewer' });
    assert.equal(unknown.status, 422);
    assert.deepEqual(unknown.body.detail[0].loc, ['body', 'email']);
    assert.equal((await owner.post(`/api/projects/${id}/members`, { user_id: carol.id, role: 'owner' })).status, 422);
    assert.equal((await owner.post(`/api/projects/${id}/members`, { user_id: carol.id, email: carol.email, role: 'viewer' })).status, 422);
    assert.equal((await owner.patch(`/api/projects/${id}/members/${carol.id}`, { role: 'viewer' })).status, 404);
    assert.equal((await owner.patch(`/api/projects/${id}/members/${owner.id}`, { role: 'viewer' })).status, 409);
    assert.equal((await carol.post(`/api/projects/${id}/members`, { user_id: carol.id, role: 'admin' })).status, 404);
    assert.equal(await memberRows(), before);
    assert.equal((await owner.delete(`/api/projects/${id}/members/${bob.id}`)).status, 204);
    assert.equal((await bob.get(`/api/projects/${id}`)).status, 404);
    assert.equal((await owner.delete(`/api/projects/${id}/members/${bob.id}`)).status, 404);
  });

  it('lets a member leave but not remove others without the right', async () => {
    const id = await project();
    await owner.post(`/api/projects/${id}/members`, { user_id: bob.id, role: 'annotator' });
    await owner.post(`/api/projects/${id}/members`, { user_id: carol.id, role: 'annotator' });
    assert.equal((await bob.delete(`/api/projects/${id}/members/${carol.id}`)).status, 403);
    assert.equal((await bob.patch(`/api/projects/${id}/members/${carol.id}`, { role: 'admin' })).status, 403);
    assert.equal((await bob.delete(`/api/projects/${id}/members/${bob.id}`)).status, 204);
    assert.equal((await bob.get(`/api/projects/${id}`)).status, 404);
  });

  it('answers 401 without credentials and 404 for unknown projects on member routes', async () => {
    const anon = t.client();
    assert.equal((await anon.get('/api/projects/1/members')).status, 401);
    assert.equal((await anon.post('/api/projects/1/members', { user_id: 1, role: 'viewer' })).status, 401);
    assert.equal((await anon.patch('/api/projects/1/members/1', { role: 'viewer' })).status, 401);
    assert.equal((await anon.delete('/api/projects/1/members/1')).status, 401);
    assert.equal((await owner.get('/api/projects/999999/members')).status, 404);
    assert.equal((await owner.get('/api/projects/0/members')).status, 422);
  });

  it('creates organizations whose admins manage their projects; plain org members get nothing', async () => {
    const created = await owner.post('/api/orgs', { name: 'Acme' });
    assert.equal(created.status, 201);
    assert.equal(created.body.role, 'owner');
    const orgId = created.body.id as number;
    assert.equal((await owner.post('/api/orgs', { name: '  ' })).status, 422);
    assert.equal((await bob.get(`/api/orgs/${orgId}`)).status, 404);
    assert.equal((await owner.post(`/api/orgs/${orgId}/members`, { user_id: bob.id, role: 'admin' })).status, 201);
    assert.equal((await owner.post(`/api/orgs/${orgId}/members`, { user_id: carol.id, role: 'member' })).status, 201);
    assert.deepEqual((await bob.get('/api/orgs')).body.map((o: { id: number; role: string }) => [o.id, o.role]), [[orgId, 'admin']]);

    const id = (await owner.post('/api/projects', { name: 'org project', org_id: orgId })).body.id as number;
    assert.equal((await owner.get(`/api/projects/${id}`)).body.org_id, orgId);
    // Org admin acts as project admin; a plain member does not see the project.
    assert.equal((await bob.patch(`/api/projects/${id}`, { name: 'renamed' })).status, 200);
    assert.equal((await bob.delete(`/api/projects/${id}`)).status, 403);
    assert.equal((await carol.get(`/api/projects/${id}`)).status, 404);
    // Only managers of the organization may move a project into it.
    const own = await project(carol);
    const refused = await carol.patch(`/api/projects/${own}`, { org_id: orgId });
    assert.equal(refused.status, 403);
    assert.equal((await carol.get(`/api/projects/${own}`)).body.org_id, null);
    const foreign = await carol.patch(`/api/projects/${own}`, { org_id: 999999 });
    assert.equal(foreign.status, 422);
    assert.deepEqual(foreign.body.detail[0].loc, ['body', 'org_id']);
    // Losing the org role takes the project away at once.
    assert.equal((await owner.delete(`/api/orgs/${orgId}/members/${bob.id}`)).status, 204);
    assert.equal((await bob.get(`/api/projects/${id}`)).status, 404);
  });

  it('keeps an organization owned: the last owner cannot step down; admins cannot make owners', async () => {
    const orgId = (await owner.post('/api/orgs', { name: 'Solo' })).body.id as number;
    assert.equal((await owner.patch(`/api/orgs/${orgId}/members/${owner.id}`, { role: 'member' })).status, 409);
    assert.equal((await owner.delete(`/api/orgs/${orgId}/members/${owner.id}`)).status, 409);
    await owner.post(`/api/orgs/${orgId}/members`, { user_id: bob.id, role: 'admin' });
    assert.equal((await bob.post(`/api/orgs/${orgId}/members`, { user_id: carol.id, role: 'owner' })).status, 403);
    assert.equal((await bob.patch(`/api/orgs/${orgId}/members/${owner.id}`, { role: 'member' })).status, 403);
    assert.equal((await bob.post(`/api/orgs/${orgId}/members`, { user_id: carol.id, role: 'member' })).status, 201);
    assert.equal((await carol.post(`/api/orgs/${orgId}/members`, { email: bob.email, role: 'member' })).status, 403);
    assert.equal((await t.client().get('/api/orgs')).status, 401);
    const members = await carol.get(`/api/orgs/${orgId}/members`);
    assert.deepEqual(members.body.map((m: { role: string }) => m.role), ['owner', 'admin', 'member']);
  });

  it('read-only API tokens may read but get 403 on every write', async () => {
    const id = await project();
    const created = await owner.post('/api/auth/tokens', { name: 'ci', scope: 'read-only', expires_in_days: 1 });
    assert.equal(created.status, 201);
    assert.equal(created.body.scope, 'read-only');
    const readOnly = t.client(created.body.token);
    assert.equal((await readOnly.get(`/api/projects/${id}`)).status, 200);
    const write = await readOnly.patch(`/api/projects/${id}`, { name: 'nope' });
    assert.equal(write.status, 403);
    assert.equal((await owner.get(`/api/projects/${id}`)).body.name, 'team project');
    assert.equal((await readOnly.post('/api/projects', { name: 'x' })).status, 403);
    assert.equal((await owner.post('/api/auth/tokens', { name: 'bad', scope: 'admin' })).status, 422);
    const listed = await owner.get('/api/auth/tokens');
    assert.equal(listed.body.find((tk: { id: number }) => tk.id === created.body.id).scope, 'read-only');
  });

  it('keeps annotators of assigned-only projects to their images', async () => {
    const id = (await owner.post('/api/projects', { name: 'assigned', assigned_only: true })).body.id as number;
    const mine = await insertImageRow(t, id);
    const other = await insertImageRow(t, id);
    await owner.post(`/api/projects/${id}/members`, { user_id: bob.id, role: 'annotator' });
    assert.equal((await owner.post(`/api/projects/${id}/assignments`, { user_id: bob.id, image_ids: [mine] })).status, 201);
    const listed = await bob.get(`/api/projects/${id}/images`);
    assert.deepEqual(listed.body.map((i: { id: number }) => i.id), [mine]);
    assert.equal(listed.headers['x-total-count'], '1');
    assert.equal((await bob.get(`/api/images/${other}`)).status, 404);
    const cls = (await owner.post(`/api/projects/${id}/classes`, { name: 'car' })).body.id;
    const body = { class_id: cls, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } };
    assert.equal((await bob.post(`/api/images/${other}/annotations`, body)).status, 404);
    assert.equal((await bob.post(`/api/images/${mine}/annotations`, body)).status, 201);
    assert.equal((await owner.get(`/api/projects/${id}/images`)).body.length, 2);
  });
});
