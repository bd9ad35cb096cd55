import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

/** Issue 30, item 8: the list shows each pending invitation's link again, kept encrypted with SECRETS_KEY. */
describe('invitation links listed again (SECRETS_KEY set)', () => {
  let t: TestApp;
  let alice: User;
  before(async () => {
    t = await startTestApp({ SECRETS_KEY: 'c'.repeat(64) });
    await t.user(); // instance admin, kept out of the way
    alice = await t.user();
  });
  after(() => t.close());

  it('lists a pending link to admins, stores it only sealed, and drops it once used, expired or revoked', async () => {
    const projectId = (await alice.post('/api/projects', { name: 'Birds' })).body.id as number;
    const made = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'kim@example.com', role: 'annotator' });
    assert.equal(made.status, 201);
    const list = await alice.get(`/api/projects/${projectId}/invitations`);
    assert.equal(list.status, 200);
    assert.equal(list.body[0].url, made.body.url, 'the same link, shown again');
    assert.equal(list.body[0].token, undefined);
    assert.equal(list.body[0].token_sealed, undefined);

    const [row] = await t.versa.deps.db.selectFrom('invitations').selectAll().where('id', '=', made.body.id).execute();
    assert.ok(row.token_sealed, 'the secret is kept sealed');
    assert.ok(!row.token_sealed.includes(made.body.token), 'never in the clear');
    // Sealed for its own row: copied into another invitation's row it does not open.
    const other = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'lee@example.com', role: 'viewer' });
    await t.versa.deps.db.updateTable('invitations').set({ token_sealed: row.token_sealed }).where('id', '=', other.body.id).execute();
    const swapped = (await alice.get(`/api/projects/${projectId}/invitations`)).body as { id: number; url: string | null }[];
    assert.equal(swapped.find((i) => i.id === other.body.id)?.url, null);

    // A non-admin member never sees links (403), and the link works for the invitee.
    const annotator = await t.user();
    await alice.post(`/api/projects/${projectId}/members`, { email: annotator.email, role: 'reviewer' });
    assert.equal((await annotator.get(`/api/projects/${projectId}/invitations`)).status, 403);
    const listedUrl = list.body[0].url as string;
    const anon = t.client();
    assert.equal((await anon.post(`/api/invitations/${listedUrl.replace('/invite/', '')}/accept`, { password: 'long enough pw' })).status, 201);
    const afterUse = (await alice.get(`/api/projects/${projectId}/invitations`)).body as { id: number; status: string; url: string | null }[];
    assert.deepEqual(afterUse.find((i) => i.id === made.body.id), { ...afterUse.find((i) => i.id === made.body.id), status: 'accepted', url: null });

    // Expired: no link; revoked: gone from the list, its link refused.
    const late = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'late@example.com', role: 'viewer' });
    await t.versa.deps.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', late.body.id).execute();
    const revoked = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'gone@example.com', role: 'viewer' });
    assert.equal((await alice.delete(`/api/invitations/${revoked.body.id}`)).status, 204);
    const final = (await alice.get(`/api/projects/${projectId}/invitations`)).body as { id: number; status: string; url: string | null }[];
    assert.equal(final.find((i) => i.id === late.body.id)?.url, null);
    assert.equal(final.find((i) => i.id === revoked.body.id), undefined);
    assert.equal((await anon.get(`/api/invitations/${revoked.body.token}`)).status, 404);
  });
});

describe('invitation links without SECRETS_KEY', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    await t.user();
  });
  after(() => t.close());

  it('keeps only the hash: the list answers url null and the link still works', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const made = await alice.post(`/api/projects/${projectId}/invitations`, { email: 'kim@example.com', role: 'viewer' });
    const [row] = await t.versa.deps.db.selectFrom('invitations').selectAll().execute();
    assert.equal(row.token_sealed, null);
    const list = (await alice.get(`/api/projects/${projectId}/invitations`)).body;
    assert.equal(list[0].status, 'pending');
    assert.equal(list[0].url, null);
    assert.equal((await t.client().get(`/api/invitations/${made.body.token}`)).status, 200);
  });
});
