import type { Db } from '../../db/database.js';

/** Parts asked for or written per statement. */
const BATCH = 100;

export interface StoredPart {
  part: number;
  revision: number;
  body: string;
}

/** Computed profile parts kept in the database (migration 0019), so that they outlive the process. */
export class ProfilePartsRepository {
  constructor(private readonly db: Db) {}

  async load(projectId: number, parts: number[]): Promise<StoredPart[]> {
    const rows: StoredPart[] = [];
    for (let at = 0; at < parts.length; at += BATCH) {
      const batch = await this.db
        .selectFrom('profile_parts')
        .select(['part', 'revision', 'body'])
        .where('project_id', '=', projectId)
        .where('part', 'in', parts.slice(at, at + BATCH))
        .execute();
      for (const row of batch) rows.push({ part: row.part, revision: Number(row.revision), body: row.body });
    }
    return rows;
  }

  async save(projectId: number, parts: StoredPart[]): Promise<void> {
    for (let at = 0; at < parts.length; at += BATCH) {
      await this.db
        .insertInto('profile_parts')
        .values(parts.slice(at, at + BATCH).map((p) => ({ project_id: projectId, ...p })))
        .onConflict((oc) => oc.columns(['project_id', 'part']).doUpdateSet((eb) => ({ revision: eb.ref('excluded.revision'), body: eb.ref('excluded.body') })))
        .execute();
    }
  }
}
