/**
 * Drills for hostile strings and numbers (issue 11, Medium 8, Low 13, 14, 17), on SQLite and PostgreSQL alike: a NUL
 * byte anywhere is 422 (PostgreSQL answered 500), control characters in names and e-mails are 422, `1e999` is 422
 * (not a project named "Infinity"), a box without area in double precision is 422, `%` and `_` in a search are
 * literal, and a cookie-authenticated write whose Origin has another scheme is refused.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('hostile input', () => {
  let t: TestApp;
  let alice: User;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  it('a NUL byte in login, register, names and queries is 422 and changes nothing', async () => {
    const anonymous = t.client();
    for (const [url, body] of [
      ['/api/auth/login', { email: 'a\u0000@example.com', password: 'x' }],
      ['/api/auth/register', { email: 'b\u0000@example.com', password: 'correct horse battery' }],
      ['/api/auth/login', { email: 'a@example.com', password: 'pass\u0000word' }],
    ] as const) {
      const res = await anonymous.post(url, body);
      assert.equal(res.status, 422, `${url}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body.detail));
    }
    const before = (await alice.get('/api/projects')).body.length;
    const res = await alice.post('/api/projects', { name: 'nul\u0000name', description: 'd' });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'name']);
    assert.equal((await alice.post('/api/projects', { name: 'ok', description: 'nul \u0000 here' })).status, 422);
    assert.equal((await alice.get('/api/projects?q=a%00b')).status, 422);
    assert.equal((await alice.get('/api/projects')).body.length, before);
  });

  it('control characters in names and e-mails are 422; in free text (notes) line breaks stay allowed', async () => {
    assert.equal((await alice.post('/api/projects', { name: 'bell\u0007' })).status, 422);
    assert.equal((await t.client().post('/api/auth/register', { email: 'x\u001b@example.com', password: 'correct horse battery' })).status, 422);
    const project = await alice.post('/api/projects', { name: 'with classes', description: 'line one\nline two' });
    assert.equal(project.status, 201);
    const cls = await alice.post(`/api/projects/${project.body.id}/classes`, { name: 'cat\u0001' });
    assert.equal(cls.status, 422);
  });

  it('{"name": 1e999} is 422, not a project named "Infinity"', async () => {
    const res = await alice.request({ method: 'POST', url: '/api/projects', payload: '{"name": 1e999}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.ok(!(await alice.get('/api/projects')).body.some((p: { name: string }) => p.name === 'Infinity'));
  });

  it('q=% and q=_ match only names that contain those characters', async () => {
    await alice.post('/api/projects', { name: '100% done' });
    await alice.post('/api/projects', { name: 'snake_case' });
    const percent = await alice.get('/api/projects?q=%25');
    assert.deepEqual(percent.body.map((p: { name: string }) => p.name), ['100% done']);
    const underscore = await alice.get('/api/projects?q=_');
    assert.deepEqual(underscore.body.map((p: { name: string }) => p.name), ['snake_case']);
  });

  it('a 1e-300 × 1e-300 box has no area: 422', async () => {
    const project = (await alice.post('/api/projects', { name: 'tiny boxes' })).body.id;
    const klass = (await alice.post(`/api/projects/${project}/classes`, { name: 'dot' })).body.id;
    const sharp = (await import('sharp')).default;
    const png = await sharp({ create: { width: 20, height: 20, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer();
    const { multipart } = await import('../helpers/multipart.js');
    const image = (await alice.request({ method: 'POST', url: `/api/projects/${project}/images`, ...multipart([{ filename: 'a.png', data: png, contentType: 'image/png' }]) })).body.images[0].id;
    const res = await alice.post(`/api/images/${image}/annotations`, { class_id: klass, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 1e-300, height: 1e-300 } });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal((await alice.get(`/api/projects/${project}`)).body.annotation_count, 0);
  });

  it('a cookie-authenticated write from an Origin with another scheme is refused', async () => {
    const login = await t.client().post('/api/auth/login', { email: alice.email, password: 'correct horse battery' });
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const headers = { cookie, host: 'versa.example', 'content-type': 'application/json' };
    const other = await t.client().request({ method: 'POST', url: '/api/projects', payload: { name: 'x' }, headers: { ...headers, origin: 'https://versa.example' } });
    assert.equal(other.status, 403);
    const same = await t.client().request({ method: 'POST', url: '/api/projects', payload: { name: 'x' }, headers: { ...headers, origin: 'http://versa.example' } });
    assert.equal(same.status, 201);
  });

  it('/redoc loads nothing from elsewhere and may not be framed', async () => {
    const res = await t.client().get('/redoc');
    assert.equal(res.status, 200);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.doesNotMatch(res.body, /https?:\/\//);
  });

  it('a malformed or cut-off request is answered in the {detail} shape', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(request));
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('end', () => resolve(data));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
        setTimeout(() => socket.destroy(), 3000);
      });
    const malformed = await raw('POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
    assert.match(malformed, /^HTTP\/1\.1 400/);
    const body = JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4));
    assert.equal(typeof body.detail, 'string');
    assert.equal(body.error, undefined);
  });
});
