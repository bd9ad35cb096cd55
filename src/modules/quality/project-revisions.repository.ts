import type { Db } from '../../db/database.js';

/** Weight rows a PostgreSQL project may gather before a read folds them into one. */
const FOLD_AT = 64;

/**
 * A project's data revision (migration 0018): the sum of its `project_revisions` rows, which the database's triggers
 * make grow with every committed change to the project's images, annotations, classes or samples.
 */
export class ProjectRevisionsRepository {
  constructor(private readonly db: Db) {}

  async current(projectId: number): Promise<number> {
    const row = await this.db
      .selectFrom('project_revisions')
      .select([(eb) => eb.fn.sum<number | string>('revision').as('total'), (eb) => eb.fn.countAll<number | string>().as('rows')])
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    if (Number(row?.rows ?? 0) > FOLD_AT) await this.fold(projectId);
    return Number(row?.total ?? 0);
  }

  /**
   * Every project's weight rows folded, for projects nobody reads the revision of (their rows would otherwise grow
   * with every write). Nothing to do on SQLite, which keeps one row per project.
   */
  async foldAll(): Promise<number> {
    const crowded = await this.db
      .selectFrom('project_revisions')
      .select('project_id')
      .groupBy('project_id')
      .having((eb) => eb.fn.countAll(), '>', FOLD_AT)
      .execute();
    for (const { project_id } of crowded) await this.fold(project_id);
    return crowded.length;
  }

  /**
   * PostgreSQL's weight rows (one per writing statement) folded into one, in one transaction: the sum is unchanged,
   * rows of transactions not yet committed are not seen and stay. Only an optimisation: a failure (the project
   * deleted meanwhile) is left for the next read.
   */
  private async fold(projectId: number): Promise<void> {
    await this.db
      .transaction()
      .execute(async (tx) => {
        const rows = await tx.deleteFrom('project_revisions').where('project_id', '=', projectId).returning('revision').execute();
        const total = rows.reduce((sum, r) => sum + Number(r.revision), 0);
        if (rows.length > 0) await tx.insertInto('project_revisions').values({ project_id: projectId, revision: total }).execute();
      })
      .catch(() => undefined);
  }
}
