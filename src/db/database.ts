import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type PostgresPool, type Transaction } from 'kysely';
import pg from 'pg';
import { ARRAY_ROWS } from './array-rows.js';
import { translatingDialect } from './errors.js';
import type { DialectName } from './dialect.js';
import { migrations } from './migrations/index.js';
import { withStatementCache } from './sqlite-statement-cache.js';
import { registerTally } from './tallies.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** A repository method's executor: the database itself or an open transaction. */
export type Executor = Db | Tx;

export interface DatabaseHandle {
  readonly db: Db;
  /**
   * For long read-only scans (streaming exports): on SQLite a second connection with a small page cache, so that one
   * export reading a million rows does not grow the process by the shared connection's 64 MB cache; on PostgreSQL
   * the same pool.
   */
  readonly scanDb: Db;
  readonly dialect: DialectName;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl: string | null;
  /** PostgreSQL schema to use instead of `public` (tests give each file its own). */
  pgSchema?: string;
  /** SQLite file name under dataDir. */
  sqliteFile?: string;
  /** The last migration to run (the tests of a migration start from the schema before it); default: every one. */
  migrateTo?: string;
}

// int8 (count(*), sums) as numbers: every count here fits comfortably in 2^53.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const handle = options.databaseUrl ? openPostgres(options.databaseUrl, options.pgSchema) : openSqlite(options);
  const migrator = new Migrator({
    db: handle.db,
    // Kysely looks for its bookkeeping tables in every schema unless told which one is ours.
    ...(options.databaseUrl ? { migrationTableSchema: options.pgSchema ?? 'public' } : {}),
    provider: { getMigrations: async () => migrations(handle.dialect) },
  });
  const { error, results } = await (options.migrateTo ? migrator.migrateTo(options.migrateTo) : migrator.migrateToLatest());
  if (error) {
    await handle.close();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${(error as Error).message ?? error}`);
  }
  return handle;
}

function openSqlite(options: DatabaseOptions): DatabaseHandle {
  mkdirSync(options.dataDir, { recursive: true });
  const file = new SQLite(join(options.dataDir, options.sqliteFile ?? 'versa.db'));
  file.pragma('journal_mode = WAL');
  file.pragma('foreign_keys = ON');
  file.pragma('synchronous = NORMAL');
  file.pragma('busy_timeout = 5000');
  file.pragma('cache_size = -65536');
  registerTally(file);
  const db = new Kysely<Database>({ dialect: translatingDialect(new SqliteDialect({ database: withStatementCache(file) })) });
  let scanDb: Db | undefined;
  return {
    db,
    // Opened on first use: after the migrations, and never for the many short-lived test databases that do not scan.
    get scanDb() {
      if (!scanDb) {
        const scanFile = new SQLite(join(options.dataDir, options.sqliteFile ?? 'versa.db'));
        scanFile.pragma('busy_timeout = 5000');
        scanFile.pragma('cache_size = -2048');
        scanFile.pragma('query_only = 1');
        registerTally(scanFile);
        scanDb = new Kysely<Database>({ dialect: translatingDialect(new SqliteDialect({ database: withStatementCache(scanFile) })) });
      }
      return scanDb;
    },
    dialect: 'sqlite',
    ping: async () => void (await sql`select 1`.execute(db)),
    close: async () => {
      await scanDb?.destroy();
      await db.destroy();
    },
  };
}

function openPostgres(url: string, schema?: string): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: translatingDialect(new PostgresDialect({ pool: withArrayRows(pool) })) });
  return {
    db,
    scanDb: db,
    dialect: 'postgres',
    ping: async () => void (await sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}

/** The pool Kysely's driver uses, whose clients answer queries marked ARRAY_ROWS with rows as arrays. */
function withArrayRows(pool: pg.Pool): PostgresPool {
  const wrapped = new WeakSet<pg.PoolClient>();
  return {
    connect: async () => {
      const client = await pool.connect();
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        (client as { query: unknown }).query = (text: unknown, values?: unknown) =>
          typeof text === 'string' && text.startsWith(ARRAY_ROWS) ? query({ text, values, rowMode: 'array' }) : query(text, values);
      }
      return client;
    },
    end: () => pool.end(),
  };
}
