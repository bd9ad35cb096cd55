import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp, type BuildOptions, type Versa } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type DatabaseHandle, type Db } from '../../src/db/database.js';

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
  raw: Buffer;
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly versa: Versa;
  readonly config: Config;
  readonly dataDir: string;
  /** A client that sends `Authorization: Bearer <token>` (or nothing, for anonymous calls). */
  client(token?: string): Client;
  /** Registers and logs in a fresh user; returns a client acting as them. */
  user(email?: string): Promise<Client & { token: string; id: number; email: string }>;
  close(): Promise<void>;
}

export interface Client {
  request<T = any>(options: InjectOptions): Promise<Response<T>>;
  get<T = any>(url: string): Promise<Response<T>>;
  post<T = any>(url: string, body?: unknown): Promise<Response<T>>;
  put<T = any>(url: string, body?: unknown): Promise<Response<T>>;
  patch<T = any>(url: string, body?: unknown): Promise<Response<T>>;
  delete<T = any>(url: string, body?: unknown): Promise<Response<T>>;
}

/**
 * Test files create and drop schemas in one PostgreSQL database at the same time, and Kysely's migrator introspects
 * the tables of every schema (pg_get_serial_sequence on each), which fails with "schema … does not exist" when
 * another file drops its schema meanwhile. Migrating and dropping therefore take turns, under this advisory lock.
 */
const SCHEMA_LOCK = 7_270_001;

async function withSchemaLock<T>(url: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [SCHEMA_LOCK]);
    return await body(client);
  } finally {
    await client.end();
  }
}

/**
 * Opens a fresh database for one test file: a new SQLite file, or a new schema when DATABASE_URL is set. `migrateTo`
 * stops at that migration; `reopen` opens the same database again, migrated to the latest (for tests of a migration).
 */
export async function openTestDatabase(
  dataDir: string,
  options: { migrateTo?: string } = {},
): Promise<{ database: DatabaseHandle; drop: () => Promise<void>; reopen: () => Promise<DatabaseHandle> }> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    return {
      database: await openDatabase({ dataDir, databaseUrl: null, migrateTo: options.migrateTo }),
      drop: async () => {},
      reopen: () => openDatabase({ dataDir, databaseUrl: null }),
    };
  }
  const schema = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  // The lock is a session lock: ending the client releases it.
  const database = await withSchemaLock(url, async (client) => {
    await client.query(`create schema ${schema}`);
    return openDatabase({ dataDir, databaseUrl: url, pgSchema: schema, migrateTo: options.migrateTo });
  });
  return {
    database,
    drop: () => withSchemaLock(url, async (client) => void (await client.query(`drop schema if exists ${schema} cascade`))),
    reopen: () => withSchemaLock(url, () => openDatabase({ dataDir, databaseUrl: url, pgSchema: schema })),
  };
}

/**
 * A migration's test database: migrated up to `migrateTo`, seeded by `seed` (which may also check the schema before
 * the migration), then reopened with every later migration. `close` closes it and drops it with its folder.
 */
export async function migratedTestDatabase<T>(
  migrateTo: string,
  seed: (db: Db) => Promise<T>,
): Promise<{ database: DatabaseHandle; seeded: T; close: () => Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'versa-migration-'));
  const opened = await openTestDatabase(dataDir, { migrateTo });
  const seeded = await seed(opened.database.db);
  await opened.database.close();
  const database = await opened.reopen();
  const close = async () => {
    await database.close();
    await opened.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  return { database, seeded, close };
}

/** A test database (see openTestDatabase) with one user, a way to add projects of theirs, and what drops it all. */
export interface ProjectTestDatabase {
  database: DatabaseHandle;
  db: Db;
  userId: number;
  /** A new object-detection project of the user. */
  newProject(name?: string): Promise<number>;
  close(): Promise<void>;
}

export async function projectTestDatabase(prefix: string): Promise<ProjectTestDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  const { database, drop } = await openTestDatabase(dataDir);
  const db = database.db;
  const now = new Date().toISOString();
  const userId = (await db.insertInto('users').values({ email: `${prefix}@example.com`, password_hash: 'x', display_name: prefix, is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
  return {
    database,
    db,
    userId,
    newProject: async (name = 'project') =>
      (await db.insertInto('projects').values({ owner_id: userId, name, description: '', project_type: 'object_detection', location: '', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id,
    close: async () => {
      await database.close();
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** An app on a fresh database; `options` reach buildApp (a fake login clock, say). */
export async function startTestApp(env: Record<string, string> = {}, options: Pick<BuildOptions, 'loginClock'> = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'versa-test-'));
  const config = loadConfig({
    REDIS_URL: process.env.REDIS_URL ?? '',
    QUEUE_PREFIX: `versa-test-${randomBytes(6).toString('hex')}`,
    AUTH_ATTEMPTS_PER_MINUTE: '100000',
    ...env,
    DATA_DIR: dataDir,
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    LOG_LEVEL: 'silent',
  });
  const { database, drop } = await openTestDatabase(dataDir);
  const versa = await buildApp(config, { ...options, database, logger: false });
  await versa.app.ready();
  const app = versa.app;
  let users = 0;

  const client = (token?: string): Client => {
    const request = async <T>(options: InjectOptions): Promise<Response<T>> => {
      const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(options.headers ?? {}) };
      const res = await app.inject({ ...options, headers });
      const raw = res.rawPayload;
      const type = String(res.headers['content-type'] ?? '');
      const body = type.includes('json') && !type.includes('ndjson') && raw.length > 0 ? JSON.parse(raw.toString('utf8')) : raw.toString('utf8');
      return { status: res.statusCode, body, headers: res.headers, raw };
    };
    const withBody = (method: InjectOptions['method']) => <T>(url: string, body?: unknown) =>
      request<T>({ method, url, ...(body === undefined ? {} : { payload: body as object }) });
    return {
      request,
      get: (url) => request({ method: 'GET', url }),
      post: withBody('POST'),
      put: withBody('PUT'),
      patch: withBody('PATCH'),
      delete: withBody('DELETE'),
    };
  };

  return {
    app,
    versa,
    config,
    dataDir,
    client,
    async user(email?: string) {
      const address = email ?? `user${++users}-${randomBytes(3).toString('hex')}@example.com`;
      const anonymous = client();
      const registered = await anonymous.post('/api/auth/register', { email: address, password: 'correct horse battery' });
      if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${JSON.stringify(registered.body)}`);
      const login = await anonymous.post('/api/auth/login', { email: address, password: 'correct horse battery' });
      if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
      return { ...client(login.body.token), token: login.body.token, id: registered.body.id, email: address };
    },
    async close() {
      await app.close();
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
