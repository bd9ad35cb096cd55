import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerErrorHandler } from '../../src/http/error-handler.js';
import type { ModuleDeps } from '../../src/modules/module-deps.js';
import { registerPagesModule } from '../../src/modules/pages/index.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const PAGES = ['/', '/login', '/projects/new', '/projects/7', '/projects/7/annotate', '/projects/7/upload', '/projects/7/review', '/queue'];
const INDEX = '<!doctype html><title>Versa</title><script type="module" src="/static/assets/app-abc.js"></script>';

/** The pages module alone, over a web/dist stand-in (it needs none of the other modules' dependencies). */
async function pagesApp(distDir: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerErrorHandler(app);
  await registerPagesModule(app, {} as ModuleDeps, { distDir });
  await app.ready();
  return app;
}

describe('pages', () => {
  let root: string;
  let built: FastifyInstance;
  let unbuilt: FastifyInstance;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'versa-pages-'));
    await mkdir(join(root, 'dist', 'assets'), { recursive: true });
    await writeFile(join(root, 'dist', 'index.html'), INDEX);
    await writeFile(join(root, 'dist', 'assets', 'app-abc.js'), 'console.log("app")');
    await writeFile(join(root, 'dist', 'robots.txt'), 'User-agent: *');
    await writeFile(join(root, 'secret.txt'), 'do not serve');
    built = await pagesApp(join(root, 'dist'));
    unbuilt = await pagesApp(join(root, 'missing'));
  });
  after(async () => {
    await built.close();
    await unbuilt.close();
    await rm(root, { recursive: true, force: true });
  });

  it('serves index.html for every page route, with security headers', async () => {
    for (const url of PAGES) {
      const res = await built.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, INDEX);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['referrer-policy'], 'same-origin');
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    }
  });

  it('serves assets under /static/ with their type; hashed assets are cached for good', async () => {
    const js = await built.inject({ url: '/static/assets/app-abc.js' });
    assert.equal(js.statusCode, 200);
    assert.equal(js.body, 'console.log("app")');
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.match(String(js.headers['cache-control']), /immutable/);
    assert.equal(js.headers['x-content-type-options'], 'nosniff');
    const txt = await built.inject({ url: '/static/robots.txt' });
    assert.equal(txt.statusCode, 200);
    assert.equal(txt.headers['cache-control'], 'no-cache');
    const head = await built.inject({ method: 'HEAD', url: '/static/assets/app-abc.js' });
    assert.equal(head.statusCode, 200);
  });

  it('answers 404 for unknown assets and never serves a file outside web/dist', async () => {
    const missing = await built.inject({ url: '/static/assets/nope.js' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { detail: 'Static file not found' });
    for (const url of ['/static/../secret.txt', '/static/%2e%2e/secret.txt', '/static/..%2fsecret.txt', '/static/assets/..%2f..%2fsecret.txt', '/static/%00', '/static/']) {
      const res = await built.inject({ url });
      assert.notEqual(res.statusCode, 200, url);
      assert.ok(!res.body.includes('do not serve'), url);
    }
  });

  it('answers 503 with how to build when web/dist is missing', async () => {
    for (const url of PAGES) {
      const res = await unbuilt.inject({ url });
      assert.equal(res.statusCode, 503, url);
      assert.match(res.json().detail, /run npm run build:web/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
    }
    assert.equal((await unbuilt.inject({ url: '/static/assets/app-abc.js' })).statusCode, 404);
  });
});

describe('pages in the full app', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  it('answers page routes without credentials (the SPA logs in), and leaves /api to the API', async () => {
    const page = await t.client().get('/projects/new');
    assert.ok(page.status === 200 || page.status === 503, `status ${page.status}`);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    const api = await t.client().get('/api/projects');
    assert.equal(api.status, 401);
    const unknown = await (await t.user()).get('/api/no-such-route');
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.detail, /not found/);
  });
});
