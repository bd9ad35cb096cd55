import type { Executor } from '../db/database.js';
import type { JobRow } from './job-queue.js';

export class JobsRepository {
  constructor(private readonly db: Executor) {}

  create(name: string, payload: unknown, projectId: number | null, createdBy: number | null): Promise<JobRow> {
    return this.db
      .insertInto('jobs')
      .values({
        name,
        status: 'queued',
        progress: 0,
        payload: JSON.stringify(payload ?? null),
        project_id: projectId,
        created_by: createdBy,
        created_at: new Date().toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  find(id: number): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async markRunning(id: number): Promise<void> {
    await this.db.updateTable('jobs').set({ status: 'running', started_at: new Date().toISOString() }).where('id', '=', id).execute();
  }

  async setProgress(id: number, progress: number): Promise<void> {
    await this.db.updateTable('jobs').set({ progress }).where('id', '=', id).execute();
  }

  async finish(id: number, outcome: { result: unknown } | { error: string }): Promise<void> {
    const done = 'error' in outcome
      ? { status: 'failed' as const, error: outcome.error }
      : { status: 'succeeded' as const, progress: 1, result: JSON.stringify(outcome.result ?? null) };
    await this.db.updateTable('jobs').set({ ...done, finished_at: new Date().toISOString() }).where('id', '=', id).execute();
  }

  /** Jobs left running by a process that died are failed at boot so they never hang forever. */
  async failInterrupted(): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'failed', error: 'interrupted by a restart', finished_at: new Date().toISOString() })
      .where('status', 'in', ['queued', 'running'])
      .execute();
  }
}
