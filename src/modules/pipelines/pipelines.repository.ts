import type { Db, Executor } from '../../db/database.js';
import type { PipelineRunStatus, ReviewState } from '../../db/schema.js';
import type { PipelineRow, PipelineRunRow } from './pipelines.schemas.js';
import { REFERENCE_KINDS, type ReferenceKind } from './step-references.logic.js';

const ID_CHUNK = 500;
/** The largest id an id column holds (PostgreSQL's integer): a larger one names nothing, and is not looked up. */
const MAX_ID = 2_147_483_647;

/** An image a step works on: where its bytes are and its oriented size. */
export interface PipelineImage {
  id: number;
  project_id: number;
  blob_key: string;
  sha256: string;
  width: number;
  height: number;
  annotation_count: number;
}

export interface ImageSelection {
  projectId: number;
  /** Select the source images frozen into this version instead of the live project. */
  versionId?: number | null;
  splits?: (string | null)[];
  classIds?: number[];
  reviewStates?: ReviewState[];
  annotated?: boolean;
  limit?: number;
}

export interface NewPipeline {
  project_id: number | null;
  org_id: number | null;
  name: string;
  description: string;
  definition: string;
  yaml_source: string | null;
  created_by: number | null;
}

/** A project with what decides who sees it and which organization it belongs to. */
export interface ProjectOwners {
  id: number;
  owner_id: number;
  org_id: number | null;
}

/** Pipelines, their runs and what runs wrote; and the image selection the select step runs. */
export class PipelinesRepository {
  constructor(private readonly db: Db) {}

  async create(row: NewPipeline): Promise<PipelineRow> {
    const now = new Date().toISOString();
    return this.db.insertInto('pipelines').values({ ...row, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
  }

  find(id: number): Promise<(PipelineRow & { owner_id: number | null }) | undefined> {
    return this.db
      .selectFrom('pipelines')
      .leftJoin('projects', 'projects.id', 'pipelines.project_id')
      .selectAll('pipelines')
      .select('projects.owner_id')
      .where('pipelines.id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Pipelines of one project, of one organization, or those a user sees: of the projects and organizations given and
   * the ones without an owner that they created (null: every pipeline).
   */
  list(filter: { projectId: number } | { orgId: number } | { projectIds: number[]; orgIds: number[]; creatorId: number } | null): Promise<PipelineRow[]> {
    let q = this.db.selectFrom('pipelines').selectAll();
    if (filter && 'projectId' in filter) q = q.where('project_id', '=', filter.projectId);
    else if (filter && 'orgId' in filter) q = q.where('org_id', '=', filter.orgId);
    else if (filter) {
      q = q.where((eb) => eb.or([
        eb('project_id', 'in', [0, ...filter.projectIds]),
        eb('org_id', 'in', [0, ...filter.orgIds]),
        eb.and([eb('project_id', 'is', null), eb('org_id', 'is', null), eb('created_by', '=', filter.creatorId)]),
      ]));
    }
    return q.orderBy('id').execute();
  }

  /** The organizations a user belongs to. */
  async orgIdsOf(userId: number): Promise<number[]> {
    return (await this.db.selectFrom('org_members').select('org_id').where('user_id', '=', userId).execute()).map((r) => r.org_id);
  }

  /** The projects that hold these models, versions and classes, keyed `kind:id` (ids that do not exist are absent). */
  async referencedProjects(refs: { kind: ReferenceKind; id: number }[]): Promise<Map<string, ProjectOwners>> {
    const tables = { model: 'models', version: 'versions', class: 'classes' } as const;
    const out = new Map<string, ProjectOwners>();
    for (const kind of REFERENCE_KINDS) {
      const ids = [...new Set(refs.filter((r) => r.kind === kind && r.id >= 1 && r.id <= MAX_ID).map((r) => r.id))];
      if (ids.length === 0) continue;
      const rows = await this.db
        // The three tables share the columns read here (id, project_id).
        .selectFrom(`${tables[kind]} as r` as 'models as r')
        .innerJoin('projects', 'projects.id', 'r.project_id')
        .select(['r.id as record_id', 'projects.id', 'projects.owner_id', 'projects.org_id'])
        .where('r.id', 'in', ids)
        .execute();
      for (const r of rows) out.set(`${kind}:${r.record_id}`, { id: r.id, owner_id: r.owner_id, org_id: r.org_id });
    }
    return out;
  }

  async update(id: number, changes: Partial<Pick<PipelineRow, 'name' | 'description' | 'definition' | 'yaml_source'>>): Promise<PipelineRow | undefined> {
    return this.db.updateTable('pipelines').set({ ...changes, updated_at: new Date().toISOString() }).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('pipelines').where('id', '=', id).execute();
  }

  async createRun(row: { pipeline_id: number; project_id: number; version_id: number | null; definition: string; steps: string; created_by: number | null }): Promise<PipelineRunRow> {
    return this.db
      .insertInto('pipeline_runs')
      .values({ ...row, status: 'queued', created_at: new Date().toISOString() })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async setRunJob(id: number, jobId: number): Promise<void> {
    await this.db.updateTable('pipeline_runs').set({ job_id: jobId }).where('id', '=', id).execute();
  }

  findRun(id: number): Promise<(PipelineRunRow & { owner_id: number }) | undefined> {
    return this.db
      .selectFrom('pipeline_runs')
      .innerJoin('projects', 'projects.id', 'pipeline_runs.project_id')
      .selectAll('pipeline_runs')
      .select('projects.owner_id')
      .where('pipeline_runs.id', '=', id)
      .executeTakeFirst();
  }

  /** A pipeline's runs newest first; `after` continues after that id in this order. */
  async runs(pipelineId: number, page: { limit: number; offset?: number; after?: number }, projectIds: number[] | null): Promise<{ items: PipelineRunRow[]; total: number }> {
    const base = () => {
      let q = this.db.selectFrom('pipeline_runs').where('pipeline_id', '=', pipelineId);
      if (projectIds !== null) q = q.where('project_id', 'in', projectIds.length > 0 ? projectIds : [0]);
      return q;
    };
    let items = base().selectAll().orderBy('id', 'desc').limit(page.limit);
    if (page.after !== undefined) items = items.where('id', '<', page.after);
    else if (page.offset) items = items.offset(page.offset);
    const [rows, count] = await Promise.all([items.execute(), base().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()]);
    return { items: rows, total: Number(count.n) };
  }

  async startRun(id: number): Promise<boolean> {
    const res = await this.db.updateTable('pipeline_runs').set({ status: 'running', started_at: new Date().toISOString() }).where('id', '=', id).where('status', '=', 'queued').executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /**
   * A running run whose job is handed back to the queue (a shutdown released it, or its worker died): `queued` again,
   * its steps pending, to run from its first step in the process that takes the job next.
   */
  async requeueRun(id: number, steps: string): Promise<void> {
    await this.db
      .updateTable('pipeline_runs')
      .set({ status: 'queued', steps, outputs: '{}', progress: 0, eta_seconds: null, error: null, started_at: null })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  /** Records progress while the run is still running (a cancelled run keeps its status). */
  async updateRun(id: number, changes: { steps?: string; outputs?: string; progress?: number; eta_seconds?: number | null }): Promise<void> {
    await this.db.updateTable('pipeline_runs').set(changes).where('id', '=', id).where('status', '=', 'running').execute();
  }

  /** Records the outcome; a run cancelled meanwhile keeps its status but gets its steps' final state. */
  async finishRun(id: number, status: PipelineRunStatus, changes: { steps: string; outputs: string; error: string | null }): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('pipeline_runs').set({ ...changes, eta_seconds: null }).where('id', '=', id).where('status', 'in', ['running', 'cancelled']).execute();
      await tx
        .updateTable('pipeline_runs')
        .set({ status, progress: status === 'succeeded' ? 1 : undefined, finished_at: new Date().toISOString() })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'running'])
        .execute();
    });
  }

  /**
   * Cancels a queued or running run and closes its steps with `closeSteps` in the same transaction; false when it
   * had already finished.
   */
  async cancelRun(id: number, closeSteps: (steps: string) => string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const cancelled = await tx
        .updateTable('pipeline_runs')
        .set({ status: 'cancelled', eta_seconds: null, finished_at: new Date().toISOString() })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'running'])
        .returning('steps')
        .executeTakeFirst();
      if (!cancelled) return false;
      await tx.updateTable('pipeline_runs').set({ steps: closeSteps(cancelled.steps) }).where('id', '=', id).execute();
      return true;
    });
  }

  /** The jobs a queued job waits behind: those running, and those queued before it (the first `limit`), and how many in all. */
  async jobsAhead(jobId: number, limit = 5): Promise<{ jobs: { id: number; name: string; status: string }[]; total: number }> {
    const ahead = this.db
      .selectFrom('jobs')
      .where('id', '!=', jobId)
      .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', '=', 'queued'), eb('id', '<', jobId)])]));
    const [jobs, count] = await Promise.all([
      ahead.select(['id', 'name', 'status']).orderBy('status', 'desc').orderBy('id').limit(limit).execute(),
      ahead.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { jobs, total: Number(count.n) };
  }

  async runStatus(id: number): Promise<PipelineRunStatus | undefined> {
    return (await this.db.selectFrom('pipeline_runs').select('status').where('id', '=', id).executeTakeFirst())?.status;
  }

  /**
   * Runs no process is running any more: queued or running while their job has finished (a restart fails the
   * in-process queue's jobs first) or never got one, and finished runs that still show a step running.
   */
  interruptedRuns(): Promise<Pick<PipelineRunRow, 'id' | 'status' | 'steps'>[]> {
    return this.db
      .selectFrom('pipeline_runs')
      .leftJoin('jobs', 'jobs.id', 'pipeline_runs.job_id')
      .select(['pipeline_runs.id', 'pipeline_runs.status', 'pipeline_runs.steps'])
      .where((eb) => eb.or([
        eb.and([
          eb('pipeline_runs.status', 'in', ['queued', 'running']),
          eb.or([eb('jobs.id', 'is', null), eb('jobs.status', 'in', ['succeeded', 'failed', 'cancelled'])]),
        ]),
        eb.and([eb('pipeline_runs.status', 'not in', ['queued', 'running']), eb('pipeline_runs.steps', 'like', '%"status":"running"%')]),
      ]))
      .execute();
  }

  /** Closes an interrupted run, unless its status changed since it was read. */
  async closeInterrupted(id: number, from: PipelineRunStatus, changes: { steps: string; status?: PipelineRunStatus; error?: string }): Promise<void> {
    const finished = changes.status ? { finished_at: new Date().toISOString(), eta_seconds: null } : {};
    await this.db.updateTable('pipeline_runs').set({ ...changes, ...finished }).where('id', '=', id).where('status', '=', from).execute();
  }

  async recordWrites(runId: number, stepId: string, kind: string, objectIds: number[], db: Executor = this.db): Promise<void> {
    for (let i = 0; i < objectIds.length; i += ID_CHUNK) {
      const chunk = objectIds.slice(i, i + ID_CHUNK).map((object_id) => ({ run_id: runId, step_id: stepId, kind, object_id }));
      await db.insertInto('pipeline_run_writes').values(chunk).execute();
    }
  }

  async writeCounts(runIds: number[]): Promise<Map<number, Record<string, number>>> {
    const out = new Map<number, Record<string, number>>(runIds.map((id) => [id, {}]));
    if (runIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('pipeline_run_writes')
      .select(['run_id', 'kind', (eb) => eb.fn.countAll<number>().as('n')])
      .where('run_id', 'in', runIds)
      .groupBy(['run_id', 'kind'])
      .execute();
    for (const r of rows) out.get(r.run_id)![r.kind] = Number(r.n);
    return out;
  }

  /** The project's images a select step picks, in id order. */
  async selectImages(s: ImageSelection): Promise<number[]> {
    let q = this.db.selectFrom('images').select('images.id').where('images.project_id', '=', s.projectId);
    if (s.versionId) {
      q = q.innerJoin('version_sources', 'version_sources.source_image_id', 'images.id').where('version_sources.version_id', '=', s.versionId);
      if (s.splits?.length) q = q.where((eb) => splitFilter(eb, 'version_sources.split', s.splits!));
    } else if (s.splits?.length) {
      q = q.where((eb) => splitFilter(eb, 'images.split', s.splits!));
    }
    if (s.reviewStates?.length) q = q.where('images.review_state', 'in', s.reviewStates);
    if (s.annotated !== undefined) q = q.where('images.annotation_count', s.annotated ? '>' : '=', 0);
    if (s.classIds?.length) {
      q = q.where((eb) => eb.exists(eb.selectFrom('annotations').select('annotations.id').whereRef('annotations.image_id', '=', 'images.id').where('annotations.class_id', 'in', s.classIds!)));
    }
    q = q.orderBy('images.id');
    if (s.limit) q = q.limit(s.limit);
    return (await q.execute()).map((r) => r.id);
  }

  /** The images with these ids that are in the project, in the order given. */
  async images(projectId: number, ids: number[]): Promise<PipelineImage[]> {
    const found = new Map<number, PipelineImage>();
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const rows = await this.db
        .selectFrom('images')
        .select(['id', 'project_id', 'blob_key', 'sha256', 'width', 'height', 'annotation_count'])
        .where('project_id', '=', projectId)
        .where('id', 'in', ids.slice(i, i + ID_CHUNK))
        .execute();
      for (const r of rows) found.set(r.id, r);
    }
    return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }

  /** Of these images, the ones already waiting for review. */
  async pendingReview(projectId: number, ids: number[]): Promise<Set<number>> {
    const out = new Set<number>();
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const rows = await this.db
        .selectFrom('images')
        .select('id')
        .where('project_id', '=', projectId)
        .where('review_state', '=', 'pending')
        .where('id', 'in', ids.slice(i, i + ID_CHUNK))
        .execute();
      for (const r of rows) out.add(r.id);
    }
    return out;
  }

  /** The projects that have pipelines, with their owners (for filtering a listing by visibility). */
  pipelineProjects(): Promise<{ id: number; owner_id: number }[]> {
    return this.db
      .selectFrom('projects')
      .select(['projects.id', 'projects.owner_id'])
      .where((eb) => eb.exists(eb.selectFrom('pipelines').select('pipelines.id').whereRef('pipelines.project_id', '=', 'projects.id')))
      .execute();
  }

  /** The projects a pipeline has run on, with their owners. */
  runProjects(pipelineId: number): Promise<{ id: number; owner_id: number }[]> {
    return this.db
      .selectFrom('projects')
      .select(['projects.id', 'projects.owner_id'])
      .where((eb) => eb.exists(eb.selectFrom('pipeline_runs').select('pipeline_runs.id').whereRef('pipeline_runs.project_id', '=', 'projects.id').where('pipeline_runs.pipeline_id', '=', pipelineId)))
      .execute();
  }

  user(id: number): Promise<{ id: number; email: string; is_admin: number } | undefined> {
    return this.db.selectFrom('users').select(['id', 'email', 'is_admin']).where('id', '=', id).executeTakeFirst();
  }

  /** What validation needs to know about a project: its models, classes and versions. */
  async projectFacts(projectId: number): Promise<{ models: { id: number; name: string; task: string; lifecycle: string; class_names: string[] }[]; classes: { id: number; name: string }[]; versionIds: number[] }> {
    const [models, classes, versions] = await Promise.all([
      this.db.selectFrom('models').select(['id', 'name', 'task', 'lifecycle', 'class_names']).where('project_id', '=', projectId).execute(),
      this.db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).execute(),
      this.db.selectFrom('versions').select('id').where('project_id', '=', projectId).execute(),
    ]);
    return {
      models: models.map((m) => ({ ...m, class_names: JSON.parse(m.class_names) as string[] })),
      classes,
      versionIds: versions.map((v) => v.id),
    };
  }
}

function splitFilter(eb: any, column: string, splits: (string | null)[]) {
  const named = splits.filter((s): s is string => s !== null);
  const parts = [];
  if (named.length) parts.push(eb(column, 'in', named));
  if (splits.includes(null)) parts.push(eb(column, 'is', null));
  return eb.or(parts);
}
