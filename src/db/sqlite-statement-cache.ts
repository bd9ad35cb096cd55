import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import { ARRAY_ROWS } from './array-rows.js';

/**
 * Hands Kysely's SQLite driver prepared statements from a cache instead of preparing each query anew: preparing
 * costs more than running the short queries of the hot paths. Least-recently-used statements are dropped beyond
 * `capacity` (queries with variable IN-lists have many texts). A statement still being iterated (a streamed query)
 * is never handed out twice; a fresh one is prepared instead. A query marked ARRAY_ROWS returns arrays (`raw`).
 */
export function withStatementCache(file: BetterSqlite3.Database, capacity = 500): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => void file.close(),
    prepare(sql: string) {
      const cached = cache.get(sql);
      if (cached && !cached.busy) {
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = file.prepare(sql);
      if (sql.startsWith(ARRAY_ROWS)) statement.raw(true);
      if (!cached) {
        cache.set(sql, statement);
        if (cache.size > capacity) cache.delete(cache.keys().next().value!);
      }
      return statement;
    },
  };
}
