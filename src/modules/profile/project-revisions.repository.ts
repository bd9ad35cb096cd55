import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { PROJECT_PART } from '../../db/migrations/0019-project-revision-parts.js';

/** Weight rows a PostgreSQL project may gather beyond one per part before a read folds them. */
const FOLD_AT = 64;

/**
 * A project's data revisions (migrations 0018, 0019): per part (1,024 consecutive image ids, or PROJECT_PART for
 * classes and samples), the sum of its `project_revisions` rows, which the database's triggers make grow with every
 * committed change to the part's rows.
 */
export class ProjectRevisionsRepository {
  constructor(private readonly db: Db) {}

  /** Each part's revision; the project part is always there (0 before its first write). */
  async parts(projectId: number): Promise<Map<number, number>> {
    const rows = await this.db
      .selectFrom('project_revisions')
      .select(['part', (eb) => eb.fn.sum<number | string>('revision').as('total'), (eb) => eb.fn.countAll<number | string>().as('rows')])
      .where('project_id', '=', projectId)
      .groupBy('part')
      .execute();
    const parts = new Map<number, number>([[PROJECT_PART, 0]]);
    let extra = 0;
    for (const row of rows) {
      parts.set(row.part, Number(row.total));
      extra += Number(row.rows) - 1;
    }
    if (extra > FOLD_AT) await this.fold(projectId);
    return parts;
  }

  /**
   * Every crowded project's weight rows folded, for projects nobody reads the revisions of (their rows would otherwise
   * grow with every write). Nothing to do on SQLite, which keeps one row per part.
   */
  async foldAll(): Promise<number> {
    const crowded = await this.db
      .selectFrom('project_revisions')
      .select('project_id')
      .groupBy('project_id')
      .having(sql`count(*) - count(distinct part)`, '>', FOLD_AT)
      .execute();
    for (const { project_id } of crowded) await this.fold(project_id);
    return crowded.length;
  }

  /**
   * PostgreSQL's weight rows (one per writing statement and part) folded into one per part, in one transaction: the
   * sums are unchanged, rows of transactions not yet committed are not seen and stay. Only an optimisation: a failure
   * (the project deleted meanwhile) is left for the next read.
   */
  private async fold(projectId: number): Promise<void> {
    await this.db
      .transaction()
      .execute(async (tx) => {
        const rows = await tx.deleteFrom('project_revisions').where('project_id', '=', projectId).returning(['part', 'revision']).execute();
        const sums = new Map<number, number>();
        for (const row of rows) sums.set(row.part, (sums.get(row.part) ?? 0) + Number(row.revision));
        const values = [...sums].map(([part, revision]) => ({ project_id: projectId, part, revision }));
        for (let at = 0; at < values.length; at += 1_000) await tx.insertInto('project_revisions').values(values.slice(at, at + 1_000)).execute();
      })
      .catch(() => undefined);
  }
}
