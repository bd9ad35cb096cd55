import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';

/**
 * The one translation of database driver errors (like directus's translateDatabaseError): every query of both
 * dialects runs through `translatingDialect`, which turns constraint failures into these typed errors, so nothing
 * outside src/db reads SQLite or PostgreSQL error codes. Services catch them by type to word a 409; one that reaches
 * the error handler uncaught is a 409 too.
 */
export class DatabaseConflictError extends Error {
  /** The driver's own code (`SQLITE_CONSTRAINT_UNIQUE`, `23505`, …), kept for logs. */
  readonly code: string;

  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A unique or primary-key constraint refused the write (another writer got there first). */
export class UniqueViolationError extends DatabaseConflictError {}

/** A foreign-key constraint refused the write (the referenced row is gone, or rows still refer to it). */
export class ForeignKeyViolationError extends DatabaseConflictError {}

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505']);
const FOREIGN_KEY_CODES = new Set(['SQLITE_CONSTRAINT_FOREIGNKEY', '23503']);

/** The typed error for a driver error, or the error itself when it is not a constraint failure. */
export function translateDatabaseError(err: unknown): unknown {
  if (err instanceof DatabaseConflictError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return err;
  const message = err instanceof Error ? err.message : String(err);
  if (UNIQUE_CODES.has(code)) return new UniqueViolationError(message, code, { cause: err });
  if (FOREIGN_KEY_CODES.has(code)) return new ForeignKeyViolationError(message, code, { cause: err });
  return err;
}

export function isUniqueViolation(err: unknown): err is UniqueViolationError {
  return err instanceof UniqueViolationError;
}

export function isForeignKeyViolation(err: unknown): err is ForeignKeyViolationError {
  return err instanceof ForeignKeyViolationError;
}

class TranslatingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(compiledQuery);
    } catch (err) {
      throw translateDatabaseError(err);
    }
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(compiledQuery, chunkSize);
    } catch (err) {
      throw translateDatabaseError(err);
    }
  }
}

class TranslatingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, TranslatingConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrapped.get(connection);
    if (!wrapper) this.wrapped.set(connection, (wrapper = new TranslatingConnection(connection)));
    return wrapper;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(unwrap(connection), settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.commitTransaction(unwrap(connection));
    } catch (err) {
      // Deferred constraints fail at commit on PostgreSQL.
      throw translateDatabaseError(err);
    }
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(unwrap(connection));
  }

  savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.savepoint!(unwrap(connection), name, compileQuery);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.rollbackToSavepoint!(unwrap(connection), name, compileQuery);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.releaseSavepoint!(unwrap(connection), name, compileQuery);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof TranslatingConnection ? connection.inner : connection;
}

/** The dialect with every query's constraint failures translated (see DatabaseConflictError). */
export function translatingDialect(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new TranslatingDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

/** PostgreSQL's deadlock and serialization failures: the transaction was rolled back and may simply run again. */
export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === '40P01' || code === '40001' || code === 'SQLITE_BUSY';
}

/**
 * Runs a transaction body again (up to `attempts` times, with a short random pause) when the database rolled it back
 * for a deadlock or a serialization failure; other errors pass through at once.
 */
export async function retryOnConflict<T>(body: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await body();
    } catch (err) {
      if (!isRetryableConflict(err) || attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}
