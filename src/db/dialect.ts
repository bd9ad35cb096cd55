import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** Adds an auto-incrementing integer primary key, spelled the way each dialect wants it. */
export function withIdColumn<T extends string>(
  table: CreateTableBuilder<T, never>,
  dialect: DialectName,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}
