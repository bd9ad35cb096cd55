import type { Executor } from '../db/database.js';
import type { JobReport, JobRow } from './job-queue.js';

/** The message of a job a shutdown handed back to the queue; the in-process queue runs these again at its next start. */
export const RELEASED_MESSAGE = 'released by a shutdown: runs again from the start';

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

  /** Queued → running; false when the job is no longer queued (cancelled meanwhile, or taken by another worker). */
  async markRunning(id: number): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set({ status: 'running', started_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where('cancel_requested', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async setProgress(id: number, progress: number): Promise<void> {
    await this.db.updateTable('jobs').set({ progress }).where('id', '=', id).execute();
  }

  async report(id: number, report: JobReport): Promise<void> {
    const values: { progress?: number; message?: string | null; eta_seconds?: number | null } = {};
    if (report.progress !== undefined) values.progress = Math.max(0, Math.min(1, report.progress));
    if (report.message !== undefined) values.message = report.message === null ? null : report.message.slice(0, 500);
    if (report.eta_seconds !== undefined) values.eta_seconds = report.eta_seconds === null || !Number.isFinite(report.eta_seconds) ? null : Math.max(0, report.eta_seconds);
    if (Object.keys(values).length === 0) return;
    // Only while it runs: a late write must not land on a record a shutdown released (or one already finished).
    await this.db.updateTable('jobs').set(values).where('id', '=', id).where('status', '=', 'running').execute();
  }

  async cancelRequested(id: number): Promise<boolean> {
    const row = await this.db.selectFrom('jobs').select('cancel_requested').where('id', '=', id).executeTakeFirst();
    return !row || row.cancel_requested !== 0;
  }

  /**
   * Asks for a job to stop: a queued job is cancelled at once; a running one is flagged for its runner. Returns the
   * job as it is now, or undefined when it does not exist.
   */
  async requestCancel(id: number): Promise<JobRow | undefined> {
    const now = new Date().toISOString();
    await this.db.updateTable('jobs').set({ cancel_requested: 1 }).where('id', '=', id).where('status', 'in', ['queued', 'running']).execute();
    await this.db
      .updateTable('jobs')
      .set({ status: 'cancelled', finished_at: now, eta_seconds: null, message: 'cancelled before it started' })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .execute();
    return this.find(id);
  }

  async finish(id: number, outcome: { result: unknown } | { error: string } | { cancelled: true }): Promise<void> {
    const done = 'cancelled' in outcome
      ? { status: 'cancelled' as const, message: 'cancelled' }
      : 'error' in outcome
        ? { status: 'failed' as const, error: outcome.error }
        : { status: 'succeeded' as const, progress: 1, result: JSON.stringify(outcome.result ?? null) };
    await this.db.updateTable('jobs').set({ ...done, eta_seconds: null, finished_at: new Date().toISOString() }).where('id', '=', id).execute();
  }

  /** Back to `queued`, from the start, marked released (a shutdown stopped it, or it had not started yet); not a job someone cancelled. */
  async release(id: number): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'queued', progress: 0, eta_seconds: null, message: RELEASED_MESSAGE })
      .where('id', '=', id)
      .where('status', 'in', ['queued', 'running'])
      .where('cancel_requested', '=', 0)
      .execute();
  }

  /**
   * A running job whose worker died (BullMQ handed it to another worker): back to `queued` to start over, true; or,
   * when someone asked to cancel it meanwhile, ended `cancelled`, false.
   */
  async requeueStalled(id: number): Promise<boolean> {
    const requeued = await this.db
      .updateTable('jobs')
      .set({ status: 'queued', progress: 0, eta_seconds: null, message: 'its worker stopped: started again' })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('cancel_requested', '=', 0)
      .executeTakeFirst();
    if (Number(requeued.numUpdatedRows) > 0) return true;
    await this.db
      .updateTable('jobs')
      .set({ status: 'cancelled', message: 'cancelled', eta_seconds: null, finished_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
    return false;
  }

  /** The jobs a shutdown released, oldest first. */
  released(): Promise<JobRow[]> {
    return this.db.selectFrom('jobs').selectAll().where('status', '=', 'queued').where('message', '=', RELEASED_MESSAGE).orderBy('id').execute();
  }

  /** Jobs queued or running, by type and status (the queue depth). */
  async depth(): Promise<{ name: string; status: string; count: number }[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['name', 'status', (eb) => eb.fn.countAll().as('count')])
      .where('status', 'in', ['queued', 'running'])
      .groupBy(['name', 'status'])
      .execute();
    return rows.map((row) => ({ name: row.name, status: row.status, count: Number(row.count) }));
  }

  /**
   * Jobs left queued or running by a process that died are failed at boot so they never hang forever; those a
   * shutdown released are left to run again.
   */
  async failInterrupted(): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'failed', error: 'interrupted by a restart', finished_at: new Date().toISOString() })
      .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', '=', 'queued'), eb.or([eb('message', 'is', null), eb('message', '!=', RELEASED_MESSAGE)])])]))
      .execute();
  }
}
