import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

export async function startServer(env: Record<string, string> = {}, dataDir?: string): Promise<BenchServer> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'versa-bench-')));
  const port = await freePort();
  // BENCH_SERVER_NODE_ARGS passes flags to the server's node only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/server.ts'], {
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
