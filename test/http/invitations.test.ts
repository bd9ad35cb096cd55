import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('invitations', () => {
  let t: TestApp;
  let alice: User;
  let mallory: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // instance admin, kept out of the way
    alice = await t.user();
    mallory = await t.user();
  });
  after(() => t.close());

  const project = async () => (await alice.post('/api/projects', { name: 'Birds' })).body.id as number;
  const invitationRows = () => t.versa.deps.db.selectFrom('invitations').selectAll().execute();

  it('invites an address without an account: the link makes the account, joins with the role, logs in; single use', async () => {
    const projectId = await project();
    const res = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'New.Person@Example.com', role: 'annotator' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.email, 'new.person@example.com');
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.url, `/invite/${res.body.token}`);
    const [stored] = await invitationRows();
    assert.notEqual(stored.token_hash, res.body.token, 'only the hash of the secret is stored');
    const days = (Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)) / 86_400_000;
    assert.equal(Math.round(days), 7);

    const anon = t.client();
    const preview = await anon.get(`/api/invitations/${res.body.token}`);
    assert.equal(preview.status, 200);
    assert.deepEqual(preview.body, { email: 'new.person@example.com', role: 'annotator', project_name: 'Birds', expires_at: res.body.expires_at });

    const accepted = await anon.post(`/api/invitations/${res.body.token}/accept`, { password: 'long enough pw', display_name: 'New' });
    assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
    assert.equal(accepted.body.project_id, projectId);
    assert.equal(accepted.body.user.email, 'new.person@example.com');
    assert.ok(String(accepted.headers['set-cookie']).includes('HttpOnly'));
    const newcomer = t.client(accepted.body.token);
    const seen = await newcomer.get(`/api/projects/${projectId}`);
    assert.equal(seen.status, 200, 'the new account sees the project');
    const members = (await alice.get(`/api/projects/${projectId}/members`)).body as { email: string; role: string }[];
    assert.deepEqual(members.find((m) => m.email === 'new.person@example.com')?.role, 'annotator');
    // The account logs in with the chosen password.
    assert.equal((await anon.post('/api/auth/login', { email: 'new.person@example.com', password: 'long enough pw' })).status, 200);

    // Single use: the link is gone, and the list shows it accepted.
    assert.equal((await anon.post(`/api/invitations/${res.body.token}/accept`, { password: 'another password' })).status, 404);
    assert.equal((await anon.get(`/api/invitations/${res.body.token}`)).status, 404);
    const list = (await alice.get(`/api/projects/${projectId}/invitations`)).body as { status: string; token?: string }[];
    assert.equal(list[0].status, 'accepted');
    assert.equal(list[0].token, undefined, 'secrets are never listed');
  });

  it('an expired or revoked link makes no account', async () => {
    const projectId = await project();
    const res = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'late@example.com', role: 'viewer', expires_in_days: 1 });
    await t.versa.deps.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', res.body.id).execute();
    const anon = t.client();
    assert.equal((await anon.post(`/api/invitations/${res.body.token}/accept`, { password: 'long enough pw' })).status, 404);
    assert.equal((await anon.post('/api/auth/login', { email: 'late@example.com', password: 'long enough pw' })).status, 401);
    assert.equal((await alice.get(`/api/projects/${projectId}/invitations`)).body[0].status, 'expired');

    const revoked = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'gone@example.com', role: 'viewer' });
    assert.equal((await alice.delete(`/api/invitations/${revoked.body.id}`)).status, 204);
    assert.equal((await anon.post(`/api/invitations/${revoked.body.token}/accept`, { password: 'long enough pw' })).status, 404);
  });

  it('refuses an address that already has an account (409), and a bad password keeps the link usable (422)', async () => {
    const projectId = await project();
    const taken = await alice.post(`/api/projects/${projectId}/invitations`, { email: mallory.email, role: 'viewer' });
    assert.equal(taken.status, 409);
    const res = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'short@example.com', role: 'viewer' });
    const anon = t.client();
    assert.equal((await anon.post(`/api/invitations/${res.body.token}/accept`, { password: 'short' })).status, 422);
    assert.equal((await anon.post(`/api/invitations/${res.body.token}/accept`, { password: 'now long enough' })).status, 201);
  });

  it('401 without credentials, 404 for a foreign project, 403 for a non-admin member, 422 for bad input; nothing stored', async () => {
    const projectId = await project();
    const before = (await invitationRows()).length;
    const anon = t.client();
    assert.equal((await anon.post(`/api/projects/${projectId}/invitations`, { email: 'x@example.com', role: 'viewer' })).status, 401);
    assert.equal((await anon.get(`/api/projects/${projectId}/invitations`)).status, 401);
    assert.equal((await anon.delete('/api/invitations/1')).status, 401);
    assert.equal((await mallory.post(`/api/projects/${projectId}/invitations`, { email: 'x@example.com', role: 'viewer' })).status, 404);
    assert.equal((await mallory.get(`/api/projects/${projectId}/invitations`)).status, 404);
    const annotator = await t.user();
    await alice.post(`/api/projects/${projectId}/members`, { email: annotator.email, role: 'annotator' });
    assert.equal((await annotator.post(`/api/projects/${projectId}/invitations`, { email: 'x@example.com', role: 'viewer' })).status, 403);
    for (const body of [{ email: 'not-an-email', role: 'viewer' }, { email: 'x@example.com', role: 'owner' }, { email: 'x@example.com', role: 'viewer', expires_in_days: 99 }]) {
      assert.equal((await alice.post(`/api/projects/${projectId}/invitations`, body)).status, 422, JSON.stringify(body));
    }
    assert.equal((await anon.get('/api/invitations/bad%2F..%2Ftoken')).status, 422);
    assert.equal((await invitationRows()).length, before);
    const mine = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'y@example.com', role: 'viewer' });
    assert.equal((await mallory.delete(`/api/invitations/${mine.body.id}`)).status, 404);
    assert.equal((await alice.delete('/api/invitations/999999')).status, 404);
  });
});

describe('my-access', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    await t.user();
  });
  after(() => t.close());

  it("answers the caller's role and permissions; 401, 404, 422", async () => {
    const alice = await t.user();
    const viewer = await t.user();
    const stranger = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    await alice.post(`/api/projects/${projectId}/members`, { email: viewer.email, role: 'viewer' });
    const own = await alice.get(`/api/projects/${projectId}/my-access`);
    assert.equal(own.body.role, 'owner');
    assert.ok(own.body.permissions.includes('project.members'));
    const view = await viewer.get(`/api/projects/${projectId}/my-access`);
    assert.deepEqual(view.body, { role: 'viewer', permissions: ['project.read', 'export'] });
    assert.equal((await t.client().get(`/api/projects/${projectId}/my-access`)).status, 401);
    assert.equal((await stranger.get(`/api/projects/${projectId}/my-access`)).status, 404);
    assert.equal((await alice.get('/api/projects/x/my-access')).status, 422);
  });
});
