import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { tallies, type TallyRow } from '../../src/db/tallies.js';
import { projectTestDatabase, type ProjectTestDatabase } from '../helpers/test-app.js';

/**
 * tallies: counts of (a, b) pairs and their distinct members, several questions in one call — SQLite's aggregate
 * function (one pass) and PostgreSQL's GROUP BY must give what counting the rows one by one gives.
 */
describe('tallies', () => {
  let opened: ProjectTestDatabase;
  let db: Db;
  let project: number;
  const now = new Date().toISOString();
  const rows: { split: string | null; width: number; height: number; annotation_count: number }[] = [];

  before(async () => {
    opened = await projectTestDatabase('versa-tallies');
    db = opened.db;
    project = await opened.newProject();
    const splits = ['train', 'valid', null];
    for (let i = 0; i < 300; i++) {
      const row = { split: splits[(i * 7) % 3], width: 10 + ((i * 13) % 5), height: (i * 31) % 11, annotation_count: i % 4 };
      rows.push(row);
      await db.insertInto('images').values({ ...row, project_id: project, filename: `${i}`, original_name: `${i}`, sha256: `s${i}`, mime_type: 'image/png', size_bytes: 1, blob_key: 'b', thumbnail_key: 't', created_at: now }).execute();
    }
  });
  after(() => opened.close());

  /** The expected rows, counted one by one, sorted as `sorted` sorts. */
  const counted = (a: (r: (typeof rows)[number]) => string | number | null, b: (r: (typeof rows)[number]) => string | number | null, member?: (r: (typeof rows)[number]) => number) => {
    const pairs = new Map<string, { a: string | number | null; b: string | number | null; rows: number; members: Set<number> }>();
    for (const r of rows) {
      const key = JSON.stringify([a(r), b(r)]);
      const pair = pairs.get(key) ?? pairs.set(key, { a: a(r), b: b(r), rows: 0, members: new Set() }).get(key)!;
      pair.rows++;
      if (member) pair.members.add(member(r));
    }
    return sorted([...pairs.values()].map((p) => ({ a: p.a, b: p.b, rows: p.rows, members: p.members.size })));
  };
  const sorted = (list: TallyRow[]) => [...list].sort((x, y) => JSON.stringify([x.a, x.b]).localeCompare(JSON.stringify([y.a, y.b])));

  it('counts pairs of text, null and integer keys, with distinct members, several questions in one call', async () => {
    const [bySplit, bySize] = await tallies(db, db.selectFrom('images').where('project_id', '=', project), [
      { a: sql.ref('split'), b: sql`width * 2`, member: sql.ref('height') },
      { a: sql.ref('width'), b: sql.ref('annotation_count') },
    ]);
    assert.deepEqual(sorted(bySplit), counted((r) => r.split, (r) => r.width * 2, (r) => r.height));
    assert.deepEqual(sorted(bySize), counted((r) => r.width, (r) => r.annotation_count));
  });

  it('gives no rows for no rows', async () => {
    const [none] = await tallies(db, db.selectFrom('images').where('project_id', '=', project + 1), [{ a: sql.ref('split'), b: sql.ref('width') }]);
    assert.deepEqual(none, []);
  });
});
