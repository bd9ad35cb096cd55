/**
 * Several machines (issue 27): two API processes and two workers, started by the deployment script
 * (scripts/deploy/versa-process.sh) as real child processes, each with its own empty DATA_DIR, sharing only
 * PostgreSQL, Redis and the S3 server. Requests are spread across the APIs; a worker is killed with SIGKILL in the
 * middle of a job, and nothing is lost. Runs under `npm run test:s3` (radosgw), with PostgreSQL and Redis at
 * DATABASE_URL / REDIS_URL (the CI's, postgres://postgres@127.0.0.1:5432/test and redis://127.0.0.1:6379, by default);
 * each run has a database, a queue prefix and a bucket prefix of its own.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { s3Env, s3Skip, s3TestBucket, type TestBucket } from './s3-env.js';

const DATABASE = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

async function reachable(): Promise<string | false> {
  if (s3Skip) return s3Skip;
  const client = new pg.Client({ connectionString: DATABASE, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
  } catch (err) {
    return `PostgreSQL at ${DATABASE} is not reachable (${(err as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    return `Redis at ${REDIS} is not reachable (${(err as Error).message})`;
  } finally {
    redis.disconnect();
  }
  return false;
}

const skip = await reachable();

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | false | null | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One Versa process started by the deployment script, with its own DATA_DIR; its log is kept for failures. */
class VersaProcess {
  child: ChildProcess | null = null;
  log = '';
  url = '';
  private constructor(
    readonly name: string,
    readonly role: 'api' | 'worker',
    readonly dataDir: string,
  ) {}

  static async start(name: string, role: 'api' | 'worker', env: Record<string, string>): Promise<VersaProcess> {
    const proc = new VersaProcess(name, role, await mkdtemp(join(tmpdir(), `versa-${name}-`)));
    const port = await freePort();
    proc.url = `http://127.0.0.1:${port}`;
    const child = spawn('scripts/deploy/versa-process.sh', [role], {
      env: { ...process.env, ...env, DATA_DIR: proc.dataDir, PORT: String(port), HOST: '127.0.0.1', VERSA_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.child = child;
    child.stdout!.on('data', (chunk) => (proc.log += chunk));
    child.stderr!.on('data', (chunk) => (proc.log += chunk));
    let exited: number | null | undefined;
    child.once('exit', (code, signal) => (exited = code ?? (signal ? -1 : null)));
    await until(`${name} to start`, 240_000, async () => {
      if (exited !== undefined) throw new Error(`${name} exited (${exited}) while starting:\n${proc.log.slice(-3000)}`);
      if (role === 'worker') return proc.log.includes('worker started: taking jobs from the queue');
      return fetch(`${proc.url}/api/health`).then((res) => res.ok, () => false);
    });
    return proc;
  }

  get pid(): number {
    return this.child!.pid!;
  }

  /** SIGKILL: no handler runs, nothing is released or flushed. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }

  async dispose(): Promise<void> {
    await this.kill('SIGTERM');
    await rm(this.dataDir, { recursive: true, force: true });
  }

  async api<T = any>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: T }> {
    const json = body !== undefined && !Buffer.isBuffer((body as { payload?: unknown }).payload);
    const form = body as { payload?: Buffer; headers?: Record<string, string> } | undefined;
    const res = await fetch(this.url + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(json ? { 'content-type': 'application/json' } : form?.headers ?? {}) },
      body: body === undefined ? undefined : json ? JSON.stringify(body) : new Uint8Array(form!.payload!),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed };
  }

  async raw(path: string, token: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
    const res = await fetch(this.url + path, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  }
}

describe('two API processes and two workers sharing only PostgreSQL, Redis and S3', { skip }, () => {
  const database = `several_${randomBytes(6).toString('hex')}`;
  const queuePrefix = `versa-several-${randomBytes(6).toString('hex')}`;
  let env: Record<string, string>;
  let bucket: TestBucket;
  let db: pg.Client;
  const processes: VersaProcess[] = [];
  let apis: VersaProcess[];
  let workers: VersaProcess[];
  let token = '';
  let projectId = 0;
  let imageIds: number[] = [];

  before(async () => {
    const admin = new pg.Client({ connectionString: DATABASE });
    await admin.connect();
    await admin.query(`create database ${database}`);
    await admin.end();
    const url = new URL(DATABASE);
    url.pathname = `/${database}`;
    const s3 = s3Env();
    bucket = await s3TestBucket(s3);
    env = {
      ...s3,
      DATABASE_URL: url.toString(),
      REDIS_URL: REDIS,
      QUEUE_PREFIX: queuePrefix,
      // A job whose worker died goes to another within about twice this.
      JOB_LOCK_S: '3',
      LOG_LEVEL: 'info',
      AUTH_ATTEMPTS_PER_MINUTE: '100000',
      SHUTDOWN_TIMEOUT_S: '5',
    };
    // The start order of the README: the first API process alone (it migrates the database), then the others.
    const first = await VersaProcess.start('api-1', 'api', env);
    processes.push(first);
    const rest = await Promise.all([VersaProcess.start('api-2', 'api', env), VersaProcess.start('worker-1', 'worker', env), VersaProcess.start('worker-2', 'worker', env)]);
    processes.push(...rest);
    apis = [first, rest[0]];
    workers = [rest[1], rest[2]];
    db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
  });

  after(async () => {
    await db?.end().catch(() => undefined);
    await Promise.all(processes.map((proc) => proc.dispose()));
    const admin = new pg.Client({ connectionString: DATABASE });
    await admin.connect();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS);
    const keys = await redis.keys(`${queuePrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await bucket?.empty();
  });

  it('each process has an empty DATA_DIR of its own and the workers answer only health and metrics over HTTP', async () => {
    for (const proc of processes) assert.deepEqual((await readdir(proc.dataDir)).filter((name) => name === 'blobs' || name.endsWith('.db')), [], proc.name);
    // A worker answers its health and metrics (for the load balancer and Prometheus), and nothing else.
    assert.equal((await fetch(`${workers[0].url}/api/health`)).status, 200);
    assert.equal((await fetch(`${workers[0].url}/api/projects`)).status, 404);
    assert.equal((await fetch(`${workers[0].url}/metrics`)).status, 401);
  });

  it('a user registered through one API logs in through the other; an upload through one is read back through the other', async () => {
    const email = `several-${randomBytes(3).toString('hex')}@example.com`;
    const registered = await apis[0].api('POST', '/api/auth/register', '', { email, password: 'correct horse battery' });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    const login = await apis[1].api('POST', '/api/auth/login', '', { email, password: 'correct horse battery' });
    assert.equal(login.status, 200);
    token = login.body.token;
    projectId = (await apis[0].api('POST', '/api/projects', token, { name: 'several machines' })).body.id;
    // Red and green squares (the test detector's classes), each image a little different (uploads deduplicate bytes).
    const images = await Promise.all(Array.from({ length: 12 }, (_, i) => squaresPng(320, 240, [
      { x: 20 + i * 3, y: 30, width: 60, height: 50, colour: [255, 0, 0] },
      { x: 200, y: 120 + i, width: 50, height: 60, colour: [0, 255, 0] },
    ])));
    const uploaded = await apis[0].api('POST', `/api/projects/${projectId}/images`, token, multipart(images.map((data, i) => ({ filename: `sq${i}.png`, data, contentType: 'image/png' }))));
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    imageIds = uploaded.body.images.map((image: { id: number }) => image.id);
    const thumb = await apis[1].raw(`/api/images/${imageIds[0]}/thumbnail`, token);
    assert.equal(thumb.status, 200);
    assert.equal(thumb.type, 'image/webp');
    assert.equal((await sharp(thumb.bytes).metadata()).width, 256);
    const file = await apis[1].raw(`/api/projects/${projectId}/images/file/${uploaded.body.images[0].filename}`, token);
    assert.deepEqual(file.bytes, images[0]);
    for (const proc of processes) assert.deepEqual(await readdir(join(proc.dataDir)).then((names) => names.filter((n) => n === 'blobs')), [], `${proc.name} keeps no stored file`);
  });

  it('a model registered through one API is served by the other, inline and as a job a worker runs', async () => {
    const model = await apis[0].api('POST', `/api/projects/${projectId}/models/upload`, token, multipart([{ name: 'file', filename: 'det.onnx', data: Buffer.from(buildYoloModel('v8')) }]));
    assert.equal(model.status, 201, JSON.stringify(model.body));
    // Up to 8 images answer at once: the API process itself loads the model from the store.
    const inline = await apis[1].api('POST', `/api/projects/${projectId}/auto-annotate/yolo`, token, { model: model.body.id, confidence: 0.25, iou: 0.5, image_ids: imageIds.slice(0, 2) });
    assert.equal(inline.status, 200, JSON.stringify(inline.body));
    assert.equal(inline.body.created, 4);
    // More is a job: a worker (another DATA_DIR, another process) loads it from the store too.
    const queued = await apis[1].api('POST', `/api/projects/${projectId}/auto-annotate/yolo`, token, { model: model.body.id, confidence: 0.25, iou: 0.5 });
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    const job = await until('the auto-annotate job', 60_000, async () => {
      const res = await apis[0].api('GET', `/api/jobs/${queued.body.job_id}`, token);
      return ['succeeded', 'failed', 'cancelled'].includes(res.body.status) && res.body;
    });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.result.created, 24);
  });

  it('a version generated through one API is exported and downloaded through the other', async () => {
    const created = await apis[1].api('POST', `/api/projects/${projectId}/versions`, token, { name: 'v1' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const ready = await until('the version', 60_000, async () => {
      const res = await apis[0].api('GET', `/api/projects/${projectId}/versions/${created.body.id}`, token);
      return ['ready', 'failed'].includes(res.body.status) && res.body;
    });
    assert.equal(ready.status, 'ready', JSON.stringify(ready));
    const exported = await apis[0].api('POST', `/api/projects/${projectId}/export`, token, { format: 'yolo', version_id: created.body.id });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    const download = await apis[1].raw(exported.body.url, token);
    assert.equal(download.status, 200);
    assert.equal(download.bytes.length, exported.body.size_bytes);
    assert.equal(download.bytes.subarray(0, 2).toString(), 'PK');
  });

  it('kill -9 of the worker running a generation: the other worker completes it, and the sweep finds no orphan', async () => {
    const noise = await Promise.all(Array.from({ length: 8 }, (_, i) => sharp(randomBytes(640 * 480 * 3), { raw: { width: 640, height: 480, channels: 3 } }).jpeg().toBuffer().then((data) => ({ filename: `noise${i}.jpg`, data, contentType: 'image/jpeg' }))));
    assert.equal((await apis[1].api('POST', `/api/projects/${projectId}/images`, token, multipart(noise))).status, 201);
    const created = await apis[0].api('POST', `/api/projects/${projectId}/versions`, token, { name: 'heavy', augmentation_config: { blur: 20, outputs_per_image: 8, apply_to: 'all' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const version = created.body;
    const jobId = (await db.query('select job_id from versions where id = $1', [version.id])).rows[0].job_id as number;
    // Which worker took it: BullMQ records the taker (host:pid); its outputs are being written to the bucket.
    const { Queue } = await import('bullmq');
    const { Redis } = await import('ioredis');
    const connection = new Redis(REDIS, { maxRetriesPerRequest: null });
    const queue = new Queue('versa-jobs', { connection, prefix: queuePrefix });
    let victim: VersaProcess;
    try {
      victim = await until('the generation to be running', 60_000, async () => {
        const active = (await queue.getActive()).find((job) => Number(job.data.jobId) === jobId);
        const pid = Number(active?.processedBy?.split(':').pop());
        const writing = (await bucket.objects()).filter((key) => key.includes(`/versions/${version.number}/`)).length >= 3;
        return writing && workers.find((w) => w.pid === pid);
      });
    } finally {
      await queue.close();
      connection.disconnect();
    }
    await victim.kill();
    const row = (await db.query('select status from jobs where id = $1', [jobId])).rows[0];
    assert.equal(row.status, 'running', 'killed mid-job');

    const ready = await until('the version to be generated by the other worker', 90_000, async () => {
      const res = await apis[1].api('GET', `/api/projects/${projectId}/versions/${version.id}`, token);
      return ['ready', 'failed'].includes(res.body.status) && res.body;
    });
    assert.equal(ready.status, 'ready', JSON.stringify(ready));
    const job = (await db.query('select status, error from jobs where id = $1', [jobId])).rows[0];
    assert.deepEqual(job, { status: 'succeeded', error: null });
    const outputs = (await db.query('select count(*)::int as n from version_images where version_id = $1', [version.id])).rows[0].n as number;
    assert.ok(outputs >= 8 * 8, `the version has all its outputs (${outputs})`);

    // A replacement worker starts (its sweep runs at start, with a short grace period here): afterwards every object
    // in the bucket is one a row refers to.
    const replacement = await VersaProcess.start('worker-3', 'worker', { ...env, IMPORT_STALE_SECONDS: '1' });
    processes.push(replacement);
    await until('the sweep', 60_000, async () => replacement.log.includes('sweep of temporary files and orphan blobs finished'));
    const referenced = new Set<string>();
    for (const { key } of (await db.query(`select blob_key as key from images union all select thumbnail_key from images union all select blob_key from exports
      union all select blob_key from models where blob_key is not null union all select blob_key from version_sources`)).rows) referenced.add(key);
    const versions = new Set((await db.query('select project_id, number from versions')).rows.map((v) => `projects/${v.project_id}/versions/${v.number}/`));
    const prefix = `${bucket.config.prefix}/`;
    const orphans = (await bucket.objects()).map((key) => key.slice(prefix.length)).filter((key) => !referenced.has(key) && ![...versions].some((v) => key.startsWith(v)));
    assert.deepEqual(orphans, []);
    assert.deepEqual(await bucket.unfinishedUploads(), []);
  });
});
