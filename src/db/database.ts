import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { translatingDialect } from './errors.js';
import type { DialectName } from './dialect.js';
import { migrations } from './migrations/index.js';
import { withStatementCache } from './sqlite-statement-cache.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** A repository method's executor: the database itself or an open transaction. */
export type Executor = Db | Tx;

export interface DatabaseHandle {
  readonly db: Db;
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
  const { error, results } = await migrator.migrateToLatest();
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
  const db = new Kysely<Database>({ dialect: translatingDialect(new SqliteDialect({ database: withStatementCache(file) })) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => void (await sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}

function openPostgres(url: string, schema?: string): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: translatingDialect(new PostgresDialect({ pool })) });
  return {
    db,
    dialect: 'postgres',
    ping: async () => void (await sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}
