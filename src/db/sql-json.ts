import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

export const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** `value` held within [low, high], evaluated once (SQLite's scalar min/max, PostgreSQL's least/greatest). */
export function clampTo(db: Kysely<any>, value: RawBuilder<number>, low: number, high: number): RawBuilder<number> {
  return isPostgres(db) ? sql<number>`least(greatest(${value}, ${sql.lit(low)}), ${sql.lit(high)})` : sql<number>`min(max(${value}, ${sql.lit(low)}), ${sql.lit(high)})`;
}

/** The integer part of a non-negative number (PostgreSQL's cast rounds, SQLite's truncates). */
export function floorInt(db: Kysely<any>, value: RawBuilder<number>): RawBuilder<number> {
  return isPostgres(db) ? sql<number>`cast(floor(${value}) as integer)` : sql<number>`cast(${value} as integer)`;
}

/**
 * A string read from a JSON text column (null when absent or JSON null), spelled for the dialect the query runs on
 * (SQLite's `->>` takes a JSON path; PostgreSQL must cast the text to json first). Path segments walk nested objects.
 */
export function jsonText(db: Kysely<any>, column: string, path: readonly string[]): RawBuilder<string | null> {
  if (isPostgres(db)) {
    let walked = sql`(${sql.ref(column)})::json`;
    for (const p of path.slice(0, -1)) walked = sql`${walked} -> ${sql.lit(p)}`;
    return sql<string | null>`(${walked} ->> ${sql.lit(path[path.length - 1])})`;
  }
  return sql<string | null>`(${sql.ref(column)} ->> ${sql.lit('$.' + path.join('.'))})`;
}

/** A text value as a JSON string literal (quotes and escapes), built by the database. */
export function jsonQuote(db: Kysely<any>, value: RawBuilder<unknown>): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`to_json(${value})::text` : sql<string>`json_quote(${value})`;
}

/** The values of a group joined by `separator` in `orderBy`'s order (SQLite's group_concat, PostgreSQL's string_agg). */
export function stringAgg(db: Kysely<any>, value: RawBuilder<string>, separator: string, orderBy: RawBuilder<unknown>): RawBuilder<string | null> {
  return isPostgres(db)
    ? sql<string | null>`string_agg(${value}, ${sql.lit(separator)} order by ${orderBy})`
    : sql<string | null>`group_concat(${value}, ${sql.lit(separator)} order by ${orderBy})`;
}
