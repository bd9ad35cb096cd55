import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { Db, Executor } from './database.js';

/**
 * A query built and compiled once, then run with new values: hot paths skip Kysely's per-call query building, which
 * costs tens of microseconds per query. `build` receives placeholders and must use each where its value goes; they
 * are recognised by identity in the compiled parameters, so their order needs no care. The SQL is compiled for the
 * dialect of `db`, and may run on it or on any transaction of it.
 */
export class PreparedQuery<P extends Record<string, unknown>, R> {
  private template: CompiledQuery<R> | null = null;
  /** For each compiled parameter: the name of the value to put there, or null to keep the built-in literal. */
  private slots: (keyof P | null)[] = [];

  constructor(
    private readonly db: Db,
    private readonly names: readonly (keyof P)[],
    private readonly build: (placeholders: P) => Compilable<R>,
  ) {}

  run(values: P, executor: Executor = this.db): Promise<QueryResult<R>> {
    const template = this.template ?? this.compile();
    const parameters = new Array(this.slots.length);
    for (let i = 0; i < parameters.length; i++) {
      const slot = this.slots[i];
      parameters[i] = slot === null ? template.parameters[i] : values[slot];
    }
    return executor.executeQuery<R>({ ...template, parameters });
  }

  private compile(): CompiledQuery<R> {
    const markers = new Map<unknown, keyof P>();
    const placeholders = {} as Record<keyof P, unknown>;
    for (const name of this.names) {
      const marker = `\u0000placeholder:${String(name)}\u0000`;
      markers.set(marker, name);
      placeholders[name] = marker;
    }
    const template = this.build(placeholders as P).compile();
    this.slots = template.parameters.map((value) => markers.get(value) ?? null);
    const used = new Set(this.slots);
    const missing = this.names.filter((name) => !used.has(name));
    if (missing.length > 0) throw new Error(`prepared query does not use ${missing.join(', ')}`);
    this.template = template;
    return template;
  }
}
