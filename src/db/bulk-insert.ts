import type { CompiledQuery, Selectable } from 'kysely';
import { chunks } from '../lib/batches.js';
import type { Db, Executor } from './database.js';
import type { Database } from './schema.js';

/** Bound parameters per statement: far below SQLite's 32,766 and PostgreSQL's 65,535. */
const PARAMETERS_PER_INSERT = 6_000;

/**
 * The one way rows are written in bulk (imports, uploads of many samples): multi-row INSERTs of a fixed column list,
 * chunked below both dialects' parameter limits. Full chunks reuse one statement compiled once with new parameters:
 * building a 400-row insert with Kysely costs more than running it. Every row gives every column (null where the
 * column is nullable); a column left out would silently take null instead of its default.
 */
export class BulkInsert<T extends keyof Database & string, C extends keyof Database[T] & string, R extends keyof Selectable<Database[T]> & string, Out = Pick<Selectable<Database[T]>, R>> {
  private readonly rowsPerInsert: number;
  private template: CompiledQuery<Out> | null = null;

  constructor(
    private readonly db: Db,
    private readonly table: T,
    private readonly columns: readonly C[],
    private readonly returning: readonly R[],
  ) {
    this.rowsPerInsert = Math.max(1, Math.floor(PARAMETERS_PER_INSERT / columns.length));
  }

  /** Inserts `rows` in order and answers the `returning` columns of each, in the same order. */
  async run(rows: readonly { [K in C]: unknown }[], executor: Executor = this.db): Promise<Out[]> {
    const out: Out[] = [];
    for (const chunk of chunks(rows, this.rowsPerInsert)) {
      const compiled = chunk.length === this.rowsPerInsert ? this.fullChunk() : this.build(chunk.length, (r, c) => chunk[r]![this.columns[c]!]);
      const parameters = compiled === this.template ? chunk.flatMap((row) => this.columns.map((c) => row[c] ?? null)) : compiled.parameters;
      const result = await executor.executeQuery<Out>({ ...compiled, parameters });
      out.push(...result.rows);
    }
    return out;
  }

  private fullChunk(): CompiledQuery<Out> {
    if (this.template) return this.template;
    const marker = (r: number, c: number) => `\u0000${r}:${c}`;
    const compiled = this.build(this.rowsPerInsert, marker);
    // The statement must take its parameters row by row, column by column, as `run` passes them.
    compiled.parameters.forEach((value, i) => {
      if (value !== marker(Math.floor(i / this.columns.length), i % this.columns.length)) throw new Error(`unexpected parameter order in the ${this.table} insert`);
    });
    this.template = compiled;
    return compiled;
  }

  private build(count: number, value: (row: number, column: number) => unknown): CompiledQuery<Out> {
    const values = Array.from({ length: count }, (_, r) => Object.fromEntries(this.columns.map((column, c) => [column, value(r, c) ?? null])));
    // Kysely cannot type a table chosen by a parameter; the columns and the answer are typed by this class.
    const query = (this.db as unknown as Db).insertInto(this.table as 'samples').values(values as never);
    return (this.returning.length > 0 ? query.returning(this.returning as never) : query).compile() as unknown as CompiledQuery<Out>;
  }
}
