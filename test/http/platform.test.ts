import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('platform', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {})));
  after(() => t.close());

  it('reports liveness and readiness without credentials', async () => {
    const health = await t.client().get('/api/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    const ready = await t.client().get('/api/ready');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'ready');
    assert.equal(ready.body.checks.database, 'ok');
    if (process.env.REDIS_URL) assert.equal(ready.body.checks.redis, 'ok');
  });

  it('reports unready when a configured Redis is unreachable', async () => {
    const other = await import('../helpers/test-app.js').then((m) => m.startTestApp({ REDIS_URL: 'redis://127.0.0.1:1' }));
    try {
      const ready = await other.client().get('/api/ready');
      assert.equal(ready.status, 503);
      assert.equal(ready.body.status, 'unavailable');
      assert.match(ready.body.checks.redis, /^failed/);
    } finally {
      await other.close();
    }
  });

  it('returns stats over the projects the caller can see', async () => {
    const anon = await t.client().get('/api/stats');
    assert.equal(anon.status, 401);
    const admin = await t.user(); // the first account is the instance admin and sees every project
    const user = await t.user();
    await user.post('/api/projects', { name: 'one' });
    await user.post('/api/projects', { name: 'two' });
    const other = await t.user();
    await other.post('/api/projects', { name: 'three' });
    const stats = await user.get('/api/stats');
    assert.equal(stats.status, 200);
    assert.deepEqual(stats.body, { project_count: 2, total_images: 0, annotated_images: 0, total_annotations: 0, total_samples: 0, labelled_samples: 0 });
    assert.equal((await admin.get('/api/stats')).body.project_count, 3);
  });

  it('serves the OpenAPI document, Swagger UI and ReDoc from local assets', async () => {
    const doc = await t.client().get('/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.0.3');
    for (const path of ['/api/projects', '/api/projects/{id}', '/api/auth/login', '/api/stats', '/api/health']) {
      assert.ok(doc.body.paths[path], `${path} is documented`);
    }
    assert.deepEqual(doc.body.paths['/api/health'].get.security, []);
    const docs = await t.client().get('/docs/');
    assert.equal(docs.status, 200);
    assert.doesNotMatch(docs.body, /https?:\/\/(cdn|unpkg)/);
    const redoc = await t.client().get('/redoc');
    assert.equal(redoc.status, 200);
    assert.match(redoc.body, /redoc\.standalone\.js/);
    assert.doesNotMatch(redoc.body, /https?:\/\//);
    const bundle = await t.client().get('/redoc/redoc.standalone.js');
    assert.equal(bundle.status, 200);
    assert.ok(bundle.raw.length > 100_000);
    // No asset of the page comes from a CDN (the footer logo used to: the CSP refused it).
    assert.doesNotMatch(bundle.raw.toString('utf8'), /cdn\.redoc\.ly/);
    assert.match(bundle.raw.toString('utf8'), /\/redoc\/logo-mini\.svg/);
    const logo = await t.client().get('/redoc/logo-mini.svg');
    assert.equal(logo.status, 200);
    assert.match(String(logo.headers['content-type']), /image\/svg\+xml/);
  });

  it('answers unknown API routes with 401 for anonymous callers and 404 with detail for authenticated ones', async () => {
    assert.equal((await t.client().get('/api/nope')).status, 401);
    const user = await t.user();
    const res = await user.get('/api/nope');
    assert.equal(res.status, 404);
    assert.match(res.body.detail, /not found/);
  });
});
