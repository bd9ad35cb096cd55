import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { generateShapesImage } from '../../src/synthetic/index.js';

/**
 * Starts Versa as a separate process (so the server and the load generator each have a core) on a free port with a
 * fresh DATA_DIR, and logs a user in.
 */
export interface BenchServer {
  url: string;
  /** The server process's id (to read its CPU time from /proc). */
  pid: number;
  dataDir: string;
  token: string;
  stop(): Promise<void>;
  api<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Uploads one generated 1280×960 JPEG into the project; resolves with the new image's id. */
  uploadImage(projectId: number): Promise<number>;
}

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

/**
 * The node flags `npm start` runs the server with (package.json, "start"): a 32 MB young generation. Exports and
 * uploads keep many short-lived stream objects and buffers in flight; with V8's default 16 MB, enough of them survive
 * into the old generation that after a few large exports V8 settles on a full collection every ~40 ms (YOLO zip
 * export after three 100k COCO exports: 0.43–0.61× `zip -0` by default, 1.18× with this flag).
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=32'];

/**
 * Re-runs the current bench script under SERVER_NODE_FLAGS when it was started without them, for benches that run
 * the service in their own process. Resolves only in the process that has the flags.
 */
export async function withServerNodeFlags(): Promise<void> {
  if (SERVER_NODE_FLAGS.every((flag) => process.execArgv.includes(flag))) return;
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  const code = await new Promise<number>((resolve) => child.once('exit', (status) => resolve(status ?? 1)));
  process.exit(code);
}

let built: Promise<void> | null = null;

/** Compiles the server as `npm start` does (`npm run build:server` → dist/), once per bench process. */
function buildServer(): Promise<void> {
  built ??= new Promise((resolve, reject) => {
    const tsc = spawn(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
    tsc.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc -p tsconfig.build.json exited ${code}`))));
  });
  return built;
}

/**
 * `compiled`: run dist/server.js, built first, exactly as `npm start` does (for memory figures: tsx's loader and its
 * compiled sources add about 80 MB to the process); otherwise src/server.ts through tsx.
 */
export async function startServer(env: Record<string, string> = {}, dataDir?: string, options: { compiled?: boolean } = {}): Promise<BenchServer> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'versa-bench-')));
  const port = await freePort();
  if (options.compiled) await buildServer();
  // BENCH_SERVER_NODE_ARGS passes flags to the server's node only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const entry = options.compiled ? ['dist/server.js'] : ['--import', 'tsx', 'src/server.ts'];
  const child: ChildProcess = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...nodeArgs, ...entry], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'warn', AUTH_ATTEMPTS_PER_MINUTE: '100000', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {
      if (i > 300) throw new Error('server did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const json = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  await json('POST', '/api/auth/register', { email: 'bench@versa.local', password: 'bench-password' }).catch(() => undefined);
  const { token } = await json('POST', '/api/auth/login', { email: 'bench@versa.local', password: 'bench-password' });
  return {
    url,
    pid: child.pid!,
    dataDir: dir,
    token,
    api: (method, path, body) => json(method, path, body, token),
    uploadImage: async (projectId) => {
      const image = await generateShapesImage({ seed: 1, width: 1280, height: 960, masks: false });
      const form = new FormData();
      form.append('files', blobOf(image.data), 'bench.jpg');
      const res = await fetch(`${url}/api/projects/${projectId}/images`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
      if (!res.ok) throw new Error(`upload → ${res.status} ${await res.text()}`);
      return (await res.json()).images[0].id;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Peak resident set size of a process so far (VmHWM), or the current one (VmRSS), in MB. */
export async function rssMb(pid: number, which: 'VmHWM' | 'VmRSS' = 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${which}:\\s+(\\d+)`).exec(status)![1]) / 1024;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Latencies (ms) of `count` sequential GETs over one keep-alive connection. */
export async function timeGets(url: string, token: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`GET ${url} → ${res.status}`);
    times.push(performance.now() - start);
  }
  return times;
}

/** A Buffer as a fetch body part (Node's Buffer type allows shared memory, which Blob's type does not). */
export function blobOf(data: Buffer): Blob {
  return new Blob([data as Uint8Array<ArrayBuffer>]);
}

/** Polls until `done` holds for the answer (a job, a version), every `everyMs`; resolves with that answer. */
export async function waitFor<T>(poll: () => Promise<T>, done: (value: T) => boolean, everyMs = 1000): Promise<T> {
  for (;;) {
    const value = await poll();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Versa built in this process (requests by `app.inject`) on a fresh DATA_DIR (and DATABASE_URL when set), with a
 * user logged in: the import benchmarks measure the service's work without a socket. `close` removes everything.
 */
export async function inProcessApp(name: string, env: Record<string, string> = {}): Promise<{ app: FastifyInstance; authorization: string; close(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), `versa-bench-${name}-`));
  const versa = await buildApp(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL ?? '', LOG_LEVEL: 'silent', AUTH_ATTEMPTS_PER_MINUTE: '1000', ...env }), { logger: false });
  const app = versa.app;
  const account = { email: 'bench@example.com', password: 'correct horse battery' };
  await app.inject({ method: 'POST', url: '/api/auth/register', payload: account });
  const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: account });
  return {
    app,
    authorization: `Bearer ${login.json().token}`,
    async close() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
