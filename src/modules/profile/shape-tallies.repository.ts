import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { PART_BITS } from '../../db/migrations/0019-project-revision-parts.js';
import { isPostgres } from '../../db/sql-json.js';

/** Attribute values of one part: [class id, attribute name, value as JSON text (null: the values not kept), annotations]. */
export type AttributeTally = [classId: number, name: string, value: string | null, annotations: number];
/** Keypoint visibility of one part: [class id, skeleton point index, v (0, 1, 2), instances]. */
export type KeypointTally = [classId: number, point: number, v: number, instances: number];

/** Distinct values of one attribute of one class kept per part (the most frequent); the rest are counted together. */
export const VALUES_PER_PART = 1000;

interface Row {
  part: number;
  class_id: number;
  key: string | number;
  value: string | number | null;
  n: number | string;
}

/**
 * The profile's attribute and keypoint aggregates over the parts `first`…`last` of a project's images, by part: the
 * database expands the stored JSON (SQLite's json_each, PostgreSQL's json_each and json_array_elements) and groups
 * it, so no annotation row comes into the process.
 */
export class ShapeTallies {
  constructor(private readonly db: Db) {}

  /** Whether a class of the project declares attributes (else no annotation holds any and the query is skipped). */
  async hasAttributes(projectId: number): Promise<boolean> {
    const row = await this.db.selectFrom('classes').select('id').where('project_id', '=', projectId).where('attributes', 'is not', null).where('attributes', '<>', '[]').limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async attributes(projectId: number, first: number, last: number): Promise<Map<number, AttributeTally[]>> {
    const pg = isPostgres(this.db);
    const each = pg ? sql`cross join lateral json_each(a.attributes::json) j` : sql`join json_each(a.attributes) j`;
    // The value as JSON text: PostgreSQL's json value is; SQLite's json_each gives SQL values and their JSON type.
    const value = pg ? sql`j.value::text` : sql`case j.type when 'true' then 'true' when 'false' then 'false' when 'text' then json_quote(j.value) else cast(j.value as text) end`;
    const rows = await this.rows(projectId, first, last, each, sql`j.key`, value, sql`a.attributes is not null`);
    const out = new Map<number, AttributeTally[]>();
    // Per part and (class, name): the VALUES_PER_PART most frequent values, the rest as one row of value null.
    const groups = new Map<string, Row[]>();
    for (const r of rows) {
      const key = `${r.part}\u0000${r.class_id}\u0000${r.key}`;
      groups.get(key)?.push(r) ?? groups.set(key, [r]);
    }
    for (const group of groups.values()) {
      const { part, class_id, key } = group[0];
      const list = out.get(part) ?? out.set(part, []).get(part)!;
      group.sort((a, b) => Number(b.n) - Number(a.n));
      for (const r of group.slice(0, VALUES_PER_PART)) list.push([class_id, String(key), String(r.value), Number(r.n)]);
      const rest = group.slice(VALUES_PER_PART).reduce((sum, r) => sum + Number(r.n), 0);
      if (rest > 0) list.push([class_id, String(key), null, rest]);
    }
    return out;
  }

  async keypoints(projectId: number, first: number, last: number): Promise<Map<number, KeypointTally[]>> {
    const pg = isPostgres(this.db);
    const each = pg ? sql`cross join lateral json_array_elements(a.geometry::json -> 'points') with ordinality as j(value, idx)` : sql`join json_each(a.geometry, '$.points') j`;
    const index = pg ? sql`j.idx - 1` : sql`j.key`;
    const v = pg ? sql`(j.value ->> 2)::integer` : sql`json_extract(j.value, '$[2]')`;
    const rows = await this.rows(projectId, first, last, each, index, v, sql`a.annotation_type = 'keypoints'`);
    const out = new Map<number, KeypointTally[]>();
    for (const r of rows) (out.get(r.part) ?? out.set(r.part, []).get(r.part)!).push([r.class_id, Number(r.key), Number(r.value), Number(r.n)]);
    return out;
  }

  /** Accepted annotations of the parts' images, each expanded by `each`, counted per part, class, `key` and `value`. */
  private async rows(projectId: number, first: number, last: number, each: RawBuilder<unknown>, key: RawBuilder<unknown>, value: RawBuilder<unknown>, where: RawBuilder<unknown>): Promise<Row[]> {
    const query = sql<Row>`select (i.id >> ${sql.lit(PART_BITS)}) as part, a.class_id as class_id, ${key} as key, ${value} as value, count(*) as n
      from images i join annotations a on a.image_id = i.id and a.status = 'accepted' ${each}
      where i.project_id = ${projectId} and i.id >= ${first << PART_BITS} and i.id < ${(last + 1) << PART_BITS} and ${where}
      group by 1, 2, 3, 4`;
    return (await query.execute(this.db)).rows;
  }
}
