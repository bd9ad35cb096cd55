import { sql, type Expression, type Kysely, type SelectQueryBuilder } from 'kysely';
import type SQLite from 'better-sqlite3';
import { isPostgres } from './sql-json.js';

/** A question for `tallies`: how many rows have each (a, b) pair, and (with `member`) how many distinct members. */
export interface TallySpec {
  a: Expression<unknown>;
  b: Expression<unknown>;
  member?: Expression<unknown>;
}

type Key = number | string | null;

export interface TallyRow {
  a: Key;
  b: Key;
  rows: number;
  /** Distinct non-null members of the pair (0 when the spec names none). */
  members: number;
}

/**
 * Counts of (a, b) pairs over the rows of `rows` (a FROM … WHERE … query), for several specs at once, with the
 * distinct members of each pair when a spec names one. PostgreSQL runs a GROUP BY per spec (hash aggregation; the
 * specs on parallel connections). SQLite's GROUP BY sorts every row first, which for a few hundred groups over a
 * million joined rows is most of the time (about 0.5 s per question), so on SQLite the specs are calls of the
 * aggregate function versa_tally (registerTally) in one pass over the rows.
 */
export async function tallies(db: Kysely<any>, rows: SelectQueryBuilder<any, any, {}>, specs: TallySpec[]): Promise<TallyRow[][]> {
  if (isPostgres(db)) {
    return Promise.all(
      specs.map(async (spec) => {
        const found = await rows
          .select([
            sql<Key>`${spec.a}`.as('a'),
            sql<Key>`${spec.b}`.as('b'),
            sql<number>`count(*)`.as('rows'),
            (spec.member ? sql<number>`count(distinct ${spec.member})` : sql<number>`0`).as('members'),
          ])
          .groupBy([sql`1`, sql`2`])
          .execute();
        return found.map((r: any) => ({ a: r.a, b: r.b, rows: Number(r.rows), members: Number(r.members) }));
      }),
    );
  }
  const row = (await rows.select(specs.map((spec, i) => sql<string>`versa_tally(${spec.a}, ${spec.b}, ${spec.member ?? null})`.as(`t${i}`))).executeTakeFirstOrThrow()) as Record<string, string>;
  return specs.map((_, i) => (JSON.parse(row[`t${i}`]) as [Key, Key, number, number][]).map(([a, b, n, members]) => ({ a, b, rows: n, members })));
}

interface Tally {
  rows: number;
  members: Set<unknown> | null;
}

/** The aggregate function `versa_tally(a, b, member)` on a SQLite connection: JSON `[[a, b, rows, members], …]`. */
export function registerTally(connection: SQLite.Database): void {
  // better-sqlite3's types know a one-argument step only.
  const options = {
    start: () => new Map<Key, Map<Key, Tally>>(),
    step: (pairs: Map<Key, Map<Key, Tally>>, a: Key, b: Key, member: unknown) => {
      let byB = pairs.get(a);
      if (!byB) pairs.set(a, (byB = new Map()));
      let tally = byB.get(b);
      if (!tally) byB.set(b, (tally = { rows: 0, members: null }));
      tally.rows++;
      if (member !== null) (tally.members ??= new Set()).add(member);
      return pairs;
    },
    result: (pairs: Map<Key, Map<Key, Tally>>) => {
      const out: [Key, Key, number, number][] = [];
      for (const [a, byB] of pairs) for (const [b, tally] of byB) out.push([a, b, tally.rows, tally.members?.size ?? 0]);
      return JSON.stringify(out);
    },
  };
  connection.aggregate('versa_tally', options as unknown as Parameters<SQLite.Database['aggregate']>[1]);
}
