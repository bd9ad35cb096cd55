import { projectVisibleTo } from '../../access/access.repository.js';
import type { Insertable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { ModelLifecycleEventsTable, ModelsTable } from '../../db/schema.js';
import { IMAGE_MODEL_TASKS, type LifecycleEventRow, type ModelRow } from './models.schemas.js';

export type ModelWithOwner = ModelRow & { owner_id: number };

export class ModelsRepository {
  constructor(private readonly db: Db) {}

  /** Models of one project, or of every project visible to `viewerId` (every project when null), newest first. */
  list(filter: { projectId?: number; viewerId: number | null }): Promise<ModelRow[]> {
    let query = this.db.selectFrom('models').innerJoin('projects', 'projects.id', 'models.project_id').selectAll('models');
    if (filter.projectId !== undefined) query = query.where('models.project_id', '=', filter.projectId);
    if (filter.viewerId !== null) query = query.where(projectVisibleTo(filter.viewerId));
    return query.orderBy('models.id', 'desc').execute();
  }

  find(id: number, db: Executor = this.db): Promise<ModelWithOwner | undefined> {
    return db
      .selectFrom('models')
      .innerJoin('projects', 'projects.id', 'models.project_id')
      .selectAll('models')
      .select('projects.owner_id')
      .where('models.id', '=', id)
      .executeTakeFirst();
  }

  findByName(projectId: number, name: string): Promise<ModelRow | undefined> {
    return this.db.selectFrom('models').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
  }

  findBySha(projectId: number, sha256: string): Promise<ModelRow | undefined> {
    return this.db.selectFrom('models').selectAll().where('project_id', '=', projectId).where('sha256', '=', sha256).executeTakeFirst();
  }

  /** The project's model for a task to use by default: the production one, else the newest not archived. */
  findDefault(projectId: number, task: string): Promise<ModelRow | undefined> {
    return this.db
      .selectFrom('models')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('task', '=', task)
      .where('lifecycle', '!=', 'archived')
      .orderBy((eb) => eb.case().when('lifecycle', '=', 'production').then(0).else(1).end())
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }

  /** The project's production model of a task that looks at whole images (detect, segment, classify), newest first. */
  imageModelInProduction(projectId: number): Promise<ModelRow | undefined> {
    return this.db
      .selectFrom('models')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('lifecycle', '=', 'production')
      .where('task', 'in', [...IMAGE_MODEL_TASKS])
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }

  findProduction(projectId: number, task: string, db: Executor = this.db): Promise<ModelRow | undefined> {
    return db
      .selectFrom('models')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('task', '=', task)
      .where('lifecycle', '=', 'production')
      .executeTakeFirst();
  }

  /**
   * Production models of the other projects with the project's owner or in its organization, with their project's
   * name and owner (the caller's access to each is checked by the service), oldest project first.
   */
  sharedWith(project: { id: number; owner_id: number; org_id: number | null }): Promise<(ModelWithOwner & { project_name: string })[]> {
    return this.db
      .selectFrom('models')
      .innerJoin('projects', 'projects.id', 'models.project_id')
      .selectAll('models')
      .select(['projects.owner_id', 'projects.name as project_name'])
      .where('models.lifecycle', '=', 'production')
      .where('models.project_id', '!=', project.id)
      .where('projects.status', '=', 'ready')
      .where((eb) => (project.org_id === null ? eb('projects.owner_id', '=', project.owner_id) : eb.or([eb('projects.owner_id', '=', project.owner_id), eb('projects.org_id', '=', project.org_id)])))
      .orderBy('models.project_id')
      .orderBy('models.id')
      .execute();
  }

  /** The names of a project's classes (what a shared model's classes are matched with). */
  async classNames(projectId: number): Promise<string[]> {
    return (await this.db.selectFrom('classes').select('name').where('project_id', '=', projectId).execute()).map((r) => r.name);
  }

  /** Lifecycle events of the given models, oldest first, grouped by model. */
  async events(modelIds: number[], db: Executor = this.db): Promise<Map<number, LifecycleEventRow[]>> {
    const byModel = new Map<number, LifecycleEventRow[]>(modelIds.map((id) => [id, []]));
    if (modelIds.length === 0) return byModel;
    const rows = await db.selectFrom('model_lifecycle_events').selectAll().where('model_id', 'in', modelIds).orderBy('id').execute();
    for (const row of rows) byModel.get(row.model_id)?.push(row);
    return byModel;
  }

  insert(values: Insertable<ModelsTable>, db: Executor = this.db): Promise<ModelRow> {
    return db.insertInto('models').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async setLifecycle(id: number, lifecycle: string, db: Executor = this.db): Promise<void> {
    await db.updateTable('models').set({ lifecycle }).where('id', '=', id).execute();
  }

  async setThresholds(id: number, thresholds: string, db: Executor = this.db): Promise<void> {
    await db.updateTable('models').set({ class_thresholds: thresholds }).where('id', '=', id).execute();
  }

  async recordEvent(values: Insertable<ModelLifecycleEventsTable>, db: Executor = this.db): Promise<void> {
    await db.insertInto('model_lifecycle_events').values(values).execute();
  }

  /** False when the model was already gone. */
  async delete(id: number, db: Executor = this.db): Promise<boolean> {
    const result = await db.deleteFrom('models').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}
