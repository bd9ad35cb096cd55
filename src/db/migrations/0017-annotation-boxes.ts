import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import { rebuildSqliteTable } from './sqlite-rebuild.js';

const BOX_COLUMNS = [
  ['box_x', 'x'],
  ['box_y', 'y'],
  ['box_w', 'width'],
  ['box_h', 'height'],
] as const;

/** A box's coordinate from the stored geometry: a bbox's own, a mask's `bbox`; null for other types. */
function expression(dialect: DialectName, key: string): string {
  return dialect === 'postgres'
    ? `case "annotation_type" when 'bbox' then ("geometry"::jsonb ->> '${key}')::double precision when 'mask' then ("geometry"::jsonb #>> '{bbox,${key}}')::double precision end`
    : `case "annotation_type" when 'bbox' then json_extract("geometry", '$.${key}') when 'mask' then json_extract("geometry", '$.bbox.${key}') end`;
}

/**
 * The boxes of bounding-box and mask annotations as stored generated columns (box_x, box_y, box_w, box_h), computed
 * by the database from the geometry on every write, whichever code path writes it: the quality report and the
 * profile read a million boxes as numbers instead of parsing a million JSON texts (issue 14). Polygons keep null
 * (their box needs every point; the report parses those few).
 *
 * PostgreSQL adds the columns (a table rewrite, in the migration's transaction). SQLite can only add virtual
 * generated columns with ALTER TABLE, which would parse the JSON on every read: the table is rebuilt with stored ones
 * (sqlite-rebuild.ts).
 */
export function annotationBoxes(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect === 'postgres') {
        const add = BOX_COLUMNS.map(([column, key]) => `add column if not exists "${column}" double precision generated always as (${expression(dialect, key)}) stored`);
        await sql.raw(`alter table "annotations" ${add.join(', ')}`).execute(db);
        return;
      }
      const columns = BOX_COLUMNS.map(([column, key]) => `"${column}" real generated always as (${expression(dialect, key)}) stored`).join(', ');
      await rebuildSqliteTable(db, 'annotations', (definition) => (definition.includes('"box_x"') ? definition : definition.replace(/\)\s*$/, `, ${columns})`)));
    },
  };
}
