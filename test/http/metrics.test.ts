/**
 * GET /metrics (issue 27, Operations): Prometheus text from one registry per app, for the METRICS_TOKEN scraper or a
 * platform admin; request latency by route pattern, job durations and queue depth, throughput, blob store operations
 * and trainer epochs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { loadConfig } from '../../src/config.js';
import { Metrics } from '../../src/lib/metrics.js';
import { LocalBlobStore } from '../../src/storage/local-blob-store.js';
import { MeteredBlobStore } from '../../src/storage/metered-blob-store.js';
import { pythonPath } from '../../src/training/python.js';
import { superviseTraining } from '../../src/training/trainer-supervisor.js';
import { TRAINER_PROTOCOL as P } from '../../src/training/trainer-protocol.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

const TOKEN = 'scraper-secret-0123456789';

/** The value of the sample `name` whose labels include `labels`; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}

async function scrape(t: TestApp): Promise<string> {
  const res = await t.client().request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  return res.body as string;
}

describe('GET /metrics', () => {
  let t: TestApp;
  let admin: Client;
  let user: Client & { id: number };
  before(async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN });
    admin = await t.user(); // the first account is the platform admin
    user = await t.user();
  });
  after(() => t.close());

  it('answers the METRICS_TOKEN bearer and platform admins in Prometheus text; 401 without them, 403 for other users', async () => {
    const scraped = await t.client().request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(scraped.status, 200);
    assert.match(String(scraped.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(scraped.body, /# TYPE versa_http_request_duration_seconds histogram/);
    assert.equal((await admin.get('/metrics')).status, 200);

    const anonymous = await t.client().get('/metrics');
    assert.equal(anonymous.status, 401);
    assert.doesNotMatch(anonymous.raw.toString(), /versa_/);
    assert.equal((await t.client('scraper-secret-0123456788').get('/metrics')).status, 401, 'a near miss of the token is no token');
    const notAdmin = await user.get('/metrics');
    assert.equal(notAdmin.status, 403);
    assert.match(notAdmin.body.detail, /admin/);
  });

  it('refuses a short METRICS_TOKEN at start', () => {
    assert.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN must be at least 16 characters/);
  });

  it('without METRICS_TOKEN only platform admins read it', async () => {
    const other = await startTestApp();
    try {
      const owner = await other.user();
      assert.equal((await other.client(TOKEN).get('/metrics')).status, 401);
      assert.equal((await owner.get('/metrics')).status, 200);
    } finally {
      await other.close();
    }
  });

  it('times requests by route pattern, method and status class, never by the URL asked for', async () => {
    await user.get('/api/projects/987654');
    await user.get('/api/projects/987655');
    await t.client().get('/no/such/route/4242');
    const text = await scrape(t);
    assert.equal(sample(text, 'versa_http_request_duration_seconds_count', { method: 'GET', route: '/api/projects/:id', status: '4xx' }), 2);
    assert.ok(sample(text, 'versa_http_request_duration_seconds_count', { route: 'unmatched', status: '4xx' })! >= 1);
    assert.doesNotMatch(text, /987654|4242/);
  });

  it('keeps one registry per app: another app in the same process has its own counts', async () => {
    const other = await startTestApp({ METRICS_TOKEN: TOKEN });
    try {
      await other.client().get('/api/health');
      const mine = await scrape(t);
      const theirs = await scrape(other);
      assert.equal(sample(theirs, 'versa_http_request_duration_seconds_count', { route: '/api/projects/:id' }), undefined);
      assert.equal(sample(theirs, 'versa_http_request_duration_seconds_count', { route: '/api/health' }), 1);
      assert.ok(sample(mine, 'versa_http_request_duration_seconds_count', { route: '/api/projects/:id' })! >= 2);
    } finally {
      await other.close();
    }
  });

  it('counts uploaded and exported images and bytes, and times the blob store by operation', async () => {
    const projectId = (await user.post('/api/projects', { name: 'metered' })).body.id as number;
    const data = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 10, g: 200, b: 30 } } }).jpeg().toBuffer();
    const { payload, headers } = multipart([{ filename: 'a.jpg', data, contentType: 'image/jpeg' }]);
    assert.equal((await user.request({ method: 'POST', url: `/api/projects/${projectId}/images`, payload, headers })).status, 201);
    const exported = await user.post(`/api/projects/${projectId}/export`, { format: 'coco' });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));

    const text = await scrape(t);
    assert.equal(sample(text, 'versa_items_total', { flow: 'ingest' }), 1);
    assert.equal(sample(text, 'versa_bytes_total', { flow: 'ingest' }), data.length);
    assert.equal(sample(text, 'versa_items_total', { flow: 'export' }), 1);
    assert.equal(sample(text, 'versa_bytes_total', { flow: 'export' }), exported.body.size_bytes);
    // The image and its thumbnail; the export archive.
    assert.ok(sample(text, 'versa_blob_operation_duration_seconds_count', { operation: 'put' })! >= 2);
    assert.equal(sample(text, 'versa_blob_operation_duration_seconds_count', { operation: 'putStream' }), 1);
  });

  it('reports the queue depth by job type and the durations of jobs by type and outcome', async () => {
    const queue = t.versa.deps.queue;
    queue.register('metrics.probe', async ({ payload }) => {
      if ((payload as { fail: boolean }).fail) throw new Error('as asked');
      return 'done';
    });
    await queue.enqueue('metrics.probe', { fail: false });
    await queue.enqueue('metrics.probe', { fail: true });
    await queue.drain();
    // A job recorded as waiting (as one queued elsewhere is): the depth comes from the records, not this process.
    await t.versa.deps.db
      .insertInto('jobs')
      .values({ name: 'metrics.waiting', status: 'queued', progress: 0, payload: '{}', project_id: null, created_by: null, created_at: new Date().toISOString() })
      .execute();

    const text = await scrape(t);
    assert.equal(sample(text, 'versa_job_duration_seconds_count', { name: 'metrics.probe', outcome: 'succeeded' }), 1);
    assert.equal(sample(text, 'versa_job_duration_seconds_count', { name: 'metrics.probe', outcome: 'failed' }), 1);
    assert.equal(sample(text, 'versa_jobs', { name: 'metrics.waiting', status: 'queued' }), 1);
    assert.equal(sample(text, 'versa_jobs', { name: 'metrics.probe' }), undefined, 'finished jobs are not in the queue');
  });

  it('is in the OpenAPI document', async () => {
    const document = (await t.client().get('/openapi.json')).body;
    const operation = document.paths['/metrics'].get;
    assert.deepEqual(Object.keys(operation.responses['200'].content), ['text/plain']);
    assert.ok(operation.responses['401'] && operation.responses['403']);
  });
});

describe('metered blob store', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'versa-metered-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  it('counts failed operations by operation, and passes results and the local path through', async () => {
    const metrics = new Metrics();
    const blobs = new MeteredBlobStore(new LocalBlobStore(dir), metrics);
    await blobs.put('a/one', Buffer.from('hello'));
    assert.equal((await blobs.get('a/one')).toString(), 'hello');
    assert.equal(await blobs.size('a/two'), null);
    await assert.rejects(blobs.get('a/two'));
    await new Promise<void>((resolve) => blobs.stream('a/two').on('error', () => resolve()));
    assert.equal(blobs.localPath?.('a/one'), join(dir, 'a/one'));

    const text = await metrics.text();
    assert.equal(sample(text, 'versa_blob_operation_errors_total', { operation: 'get' }), 1);
    assert.equal(sample(text, 'versa_blob_operation_errors_total', { operation: 'stream' }), 1);
    assert.equal(sample(text, 'versa_blob_operation_errors_total', { operation: 'put' }), undefined);
    assert.equal(sample(text, 'versa_blob_operation_duration_seconds_count', { operation: 'get' }), 2);
    assert.equal(sample(text, 'versa_blob_operation_duration_seconds_count', { operation: 'size' }), 1);
  });
});

describe('trainer epochs', { timeout: 60_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-epochs-'));
    await writeFile(join(dir, 'run.json'), '{}');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('counts each epoch a trainer reports, by adapter', async () => {
    const events = [
      `dict(event="started", protocol=${P}, adapter="fake", params={}, env={})`,
      ...[1, 2, 3].map((e) => `dict(event="epoch", protocol=${P}, epoch=${e}, epochs=3, progress=${e / 3}, eta_seconds=None, train_loss=0.5)`),
      `dict(event="metrics", protocol=${P}, task="detect", metrics={"map50": 0.5}, per_class=[])`,
      `dict(event="finished", protocol=${P}, params={"epochs": 3}, duration_s=0.1, env={})`,
    ];
    const script = join(dir, 'three.py');
    await writeFile(script, `import json\n${events.map((e) => `print(json.dumps(${e}), flush=True)`).join('\n')}\n`);
    const metrics = new Metrics();
    const recorder = { started: async () => {}, epochs: async () => {}, report: async () => {} };
    const env = loadConfig({ PATH: process.env.PATH }).trainerEnv;
    await superviseTraining({ python: pythonPath(), script, configPath: join(dir, 'run.json'), cwd: dir, env, signal: new AbortController().signal }, recorder, { metrics, adapter: 'fake-detect' });
    assert.equal(sample(await metrics.text(), 'versa_trainer_epochs_total', { adapter: 'fake-detect' }), 3);
  });
});
