import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('auth', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  it('registers the first user as instance admin and later ones as plain users', async () => {
    const anon = t.client();
    const first = await anon.post('/api/auth/register', { email: 'Admin@Example.com', password: 'password-one', display_name: 'Ada' });
    assert.equal(first.status, 201);
    assert.equal(first.body.email, 'admin@example.com');
    assert.equal(first.body.is_admin, true);
    assert.equal(first.body.display_name, 'Ada');
    assert.equal(first.body.password_hash, undefined);
    const second = await anon.post('/api/auth/register', { email: 'bob@example.com', password: 'password-two' });
    assert.equal(second.status, 201);
    assert.equal(second.body.is_admin, false);
    assert.equal(second.body.display_name, 'bob');
  });

  it('refuses a duplicate email with 409 and bad bodies with 422', async () => {
    const anon = t.client();
    assert.equal((await anon.post('/api/auth/register', { email: 'bob@example.com', password: 'password-two' })).status, 409);
    const short = await anon.post('/api/auth/register', { email: 'carol@example.com', password: 'short' });
    assert.equal(short.status, 422);
    assert.deepEqual(short.body.detail[0].loc, ['body', 'password']);
    const missing = await anon.post('/api/auth/register', { password: 'long enough' });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.detail[0].loc, ['body', 'email']);
    assert.equal((await anon.post('/api/auth/register', { email: 'not-an-email', password: 'long enough' })).status, 422);
  });

  it('logs in with a bearer token and a HttpOnly session cookie; wrong passwords are 401', async () => {
    const anon = t.client();
    const bad = await anon.post('/api/auth/login', { email: 'bob@example.com', password: 'wrong-password' });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers['www-authenticate'], 'Bearer');
    assert.equal((await anon.post('/api/auth/login', { email: 'nobody@example.com', password: 'whatever1' })).status, 401);
    const ok = await anon.post('/api/auth/login', { email: 'BOB@example.com', password: 'password-two' });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.token_type, 'bearer');
    assert.equal(ok.body.user.email, 'bob@example.com');
    const cookie = String(ok.headers['set-cookie']);
    assert.match(cookie, /versa_session=/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    const me = await t.client(ok.body.token).get('/api/auth/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.email, 'bob@example.com');
  });

  it('requires credentials on protected routes and rejects unknown tokens', async () => {
    const anon = await t.client().get('/api/auth/me');
    assert.equal(anon.status, 401);
    assert.equal(anon.headers['www-authenticate'], 'Bearer');
    assert.equal(typeof anon.body.detail, 'string');
    assert.equal((await t.client('vrs_nope').get('/api/auth/me')).status, 401);
    assert.equal((await t.client().request({ method: 'GET', url: '/api/auth/me', headers: { authorization: 'Basic abc' } })).status, 401);
  });

  it('authenticates by cookie and refuses cross-site cookie writes', async () => {
    const login = await t.client().post('/api/auth/login', { email: 'bob@example.com', password: 'password-two' });
    const cookie = `versa_session=${login.body.token}`;
    const me = await t.client().request({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
    assert.equal(me.status, 200);
    const crossSite = await t.client().request({
      method: 'POST', url: '/api/projects', payload: { name: 'x' },
      headers: { cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(crossSite.status, 403);
    const sameSite = await t.client().request({
      method: 'POST', url: '/api/projects', payload: { name: 'x' },
      headers: { cookie, origin: 'http://localhost:80', host: 'localhost:80', 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(sameSite.status, 201);
  });

  it('creates, lists and revokes API tokens; the secret is shown once', async () => {
    const user = await t.user();
    const created = await user.post('/api/auth/tokens', { name: 'ci', expires_in_days: 30 });
    assert.equal(created.status, 201);
    assert.match(created.body.token, /^vrs_/);
    assert.ok(created.body.expires_at);
    const listed = await user.get('/api/auth/tokens');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.map((x: any) => x.name), ['ci']);
    assert.equal(listed.body[0].token, undefined);
    const api = t.client(created.body.token);
    assert.equal((await api.get('/api/auth/me')).status, 200);
    assert.equal((await user.delete(`/api/auth/tokens?id=${created.body.id}`)).status, 204);
    assert.equal((await api.get('/api/auth/me')).status, 401);
    assert.equal((await user.delete(`/api/auth/tokens/${created.body.id}`)).status, 404);
    assert.equal((await user.delete('/api/auth/tokens?id=abc')).status, 422);
    assert.equal((await user.post('/api/auth/tokens', {})).status, 422);
  });

  it("cannot revoke another user's token", async () => {
    const alice = await t.user();
    const mallory = await t.user();
    const token = await alice.post('/api/auth/tokens', { name: 'mine' });
    assert.equal((await mallory.delete(`/api/auth/tokens/${token.body.id}`)).status, 404);
    assert.equal((await t.client(token.body.token).get('/api/auth/me')).status, 200);
  });

  it('logout ends the session token', async () => {
    const user = await t.user();
    assert.equal((await user.post('/api/auth/logout')).status, 204);
    assert.equal((await user.get('/api/auth/me')).status, 401);
  });

  it('answers malformed JSON with 400, not 500', async () => {
    const res = await t.client().request({
      method: 'POST', url: '/api/auth/login', payload: '{"email": ', headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.equal(typeof res.body.detail, 'string');
  });
});

describe('auth rate limits', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ AUTH_ATTEMPTS_PER_MINUTE: '10' })));
  after(() => t.close());

  it('delays an account after repeated failed logins (429 with Retry-After) even with the right password', async () => {
    const anon = t.client();
    await anon.post('/api/auth/register', { email: 'victim@example.com', password: 'the-real-password' });
    for (let i = 0; i < 2; i++) {
      assert.equal((await anon.post('/api/auth/login', { email: 'victim@example.com', password: `guess-${i}-xx` })).status, 401);
    }
    const locked = await anon.post('/api/auth/login', { email: 'victim@example.com', password: 'the-real-password' });
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers['retry-after']) > 0);
    assert.match(locked.body.detail, /Too many/);
  });

  it('limits login and register attempts per client address', async () => {
    const anon = t.client();
    let status = 0;
    for (let i = 0; i < 12 && status !== 429; i++) {
      status = (await anon.post('/api/auth/login', { email: `nobody${i}@example.com`, password: 'whatever-123' })).status;
    }
    assert.equal(status, 429);
    assert.equal((await anon.post('/api/auth/register', { email: 'late@example.com', password: 'password-123' })).status, 429);
  });
});
