import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * A real Versa process (`node --import tsx src/server.ts`) on a free port with its own DATA_DIR and database (the
 * SQLite file in DATA_DIR, or a fresh PostgreSQL database when DATABASE_URL is set), for drills that kill it with
 * SIGKILL and start it again on the same data.
 */
export interface ServerProcess {
  url: string;
  dataDir: string;
  /** Starts the server (again) on the same data, `env` over the first start's; resolves once /api/health answers. */
  start(env?: Record<string, string>): Promise<void>;
  /** SIGKILL: no handler runs, nothing is flushed. */
  kill(): Promise<void>;
  /** Sends `signal` (a graceful stop); `exited` resolves with the exit code once the process has ended. */
  signal(signal: NodeJS.Signals): { exited: Promise<number | null> };
  /** A SQL count on the server's database, read directly. */
  count(sql: string): Promise<number>;
  /** Stops the server and removes its data and database. */
  dispose(): Promise<void>;
  /** Files under DATA_DIR/<relative>, recursively (relative paths). */
  files(relative: string): Promise<string[]>;
  /** JSON request with an optional bearer token. */
  api<T = any>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T; headers: Headers }>;
  /** Registers and logs in a user; returns the token. */
  login(email: string): Promise<string>;
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

export async function serverProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'versa-drill-'));
  const baseUrl = process.env.DATABASE_URL;
  let databaseUrl = '';
  let dropDatabase = async () => {};
  if (baseUrl) {
    const name = `drill_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = async () => {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    };
  }
  let child: ChildProcess | null = null;
  let url = '';
  const start = async (extra: Record<string, string> = {}) => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        REDIS_URL: '',
        LOG_LEVEL: 'warn',
        AUTH_ATTEMPTS_PER_MINUTE: '100000',
        ...env,
        ...extra,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<never>((_, reject) => child!.once('exit', (code) => reject(new Error(`server exited with ${code}`))));
    exited.catch(() => undefined);
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/api/health`)).ok) return;
      } catch {
        if (i > 600) throw new Error('server did not start');
      }
      await Promise.race([new Promise((r) => setTimeout(r, 100)), exited]);
    }
  };
  const kill = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };
  const signal = (name: NodeJS.Signals) => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return { exited: Promise.resolve(running?.exitCode ?? null) };
    const exited = new Promise<number | null>((resolve) => running.once('exit', (code) => resolve(code)));
    running.kill(name);
    return { exited };
  };
  const count = async (sql: string): Promise<number> => {
    if (databaseUrl) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return Number(Object.values((await client.query(sql)).rows[0])[0]);
      } finally {
        await client.end();
      }
    }
    const db = new Database(join(dataDir, 'versa.db'), { readonly: true });
    try {
      return Number(Object.values(db.prepare(sql).get() as object)[0]);
    } finally {
      db.close();
    }
  };
  const api = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  const files = async (relative: string) => {
    try {
      return (await readdir(join(dataDir, relative), { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name).slice(join(dataDir, relative).length + 1));
    } catch {
      return [];
    }
  };
  await start();
  return {
    get url() {
      return url;
    },
    dataDir,
    start,
    kill,
    signal,
    count,
    files,
    api,
    async login(email) {
      await api('POST', '/api/auth/register', { email, password: 'correct horse battery' });
      const res = await api('POST', '/api/auth/login', { email, password: 'correct horse battery' });
      if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
      return res.body.token as string;
    },
    async dispose() {
      await kill();
      await dropDatabase();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns true (or throws after `timeoutMs`). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
