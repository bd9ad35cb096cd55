import { isDeepStrictEqual } from 'node:util';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, type ValidationIssue } from '../../http/errors.js';
import type { Page } from '../../http/pagination.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import type { PluginRegistry } from '../../plugins/plugin-registry.js';
import { ppeExample } from './pipeline-example.js';
import type { PipelineRunner, RunReporter } from './pipeline-runner.js';
import { parseJson, parseYaml, pathText, toYaml, type ParsedText } from './pipeline-text.js';
import { validateDefinition, type Problem, type ProjectFacts } from './pipeline-validation.js';
import type { PipelinesRepository } from './pipelines.repository.js';
import type {
  PipelineCreate,
  PipelineDefinition,
  PipelineOut,
  PipelineRow,
  PipelineRunOut,
  PipelineRunRow,
  PipelineUpdate,
  ProblemOut,
  RunRequest,
  StepRunOut,
  StepTypeOut,
  ValidationOut,
} from './pipelines.schemas.js';

export const PIPELINE_RUN_JOB = 'pipelines.run';

export interface PipelineRunPayload {
  runId: number;
}

/** A run's job context: the train branch adds `signal` and `report()`; both are used when present. */
type RunJobContext = JobContext<PipelineRunPayload> & { signal?: AbortSignal; report?: RunReporter['report'] };

type Located = Problem & { line?: number; column?: number };

export class PipelinesService {
  constructor(
    private readonly repository: PipelinesRepository,
    private readonly registry: PluginRegistry,
    private readonly access: ProjectAccess,
    private readonly queue: JobQueue,
    private readonly runner: PipelineRunner,
  ) {}

  stepTypes(): StepTypeOut[] {
    return this.registry.list('pipeline_step').map((p) => {
      const reason = p.step!.unavailable?.() ?? null;
      return {
        type: p.name,
        title: p.title,
        description: p.description,
        params_schema: p.config_schema,
        inputs: [...p.step!.inputs],
        outputs: [...p.step!.outputs],
        writes: p.step!.writes,
        builtin: p.builtin,
        available: reason === null,
        reason,
      };
    });
  }

  example(): PipelineDefinition {
    return ppeExample();
  }

  /** Every problem of a definition; with a project, also its models, classes and versions. */
  async validate(caller: Caller, value: unknown, projectId?: number): Promise<ValidationOut> {
    const facts = projectId === undefined ? null : await this.facts(caller, projectId);
    return out(validateDefinition(value, this.registry, facts));
  }

  async validateYaml(caller: Caller, text: string, projectId?: number): Promise<ValidationOut> {
    const parsed = parseYaml(text);
    const facts = projectId === undefined ? null : await this.facts(caller, projectId);
    return out(locate(validateDefinition(parsed.value, this.registry, facts), parsed));
  }

  /** A JSON body read as text (so that a syntax error can name its line and column). */
  parseJsonBody(text: string): unknown {
    return parseJson(text);
  }

  async list(caller: Caller, projectId?: number): Promise<PipelineOut[]> {
    if (projectId !== undefined) await this.access.project(caller, projectId, 'project.read');
    const rows = await this.repository.list(projectId, projectId !== undefined || caller.isAdmin ? null : await this.visibleProjects(caller, await this.repository.pipelineProjects()));
    return rows.map((r) => this.toOut(r));
  }

  async get(caller: Caller, id: number): Promise<PipelineOut> {
    return this.toOut(await this.visible(caller, id));
  }

  async yaml(caller: Caller, id: number): Promise<string> {
    const row = await this.visible(caller, id);
    const definition = JSON.parse(row.definition) as PipelineDefinition;
    // The user's own text (with comments) while it still reads back to the stored definition.
    if (row.yaml_source !== null) {
      try {
        if (isDeepStrictEqual(parseYaml(row.yaml_source).value, definition)) return row.yaml_source;
      } catch {
        // fall through to a fresh rendering
      }
    }
    return toYaml(definition);
  }

  /** Creates a pipeline; an absent or empty definition is the protective-equipment example. */
  async create(caller: Caller, input: PipelineCreate): Promise<PipelineOut> {
    const projectId = input.project_id ?? null;
    if (projectId !== null) await this.access.project(caller, projectId, 'project.update');
    const given = input.definition ?? null;
    // Empty: absent, null, {} or no steps. The example then keeps a name or description given with it.
    const empty = given === null || Object.keys(given).length === 0 || (Array.isArray(given.steps) && given.steps.length === 0);
    const definition: Record<string, unknown> = empty ? { ...ppeExample(), ...pick(given, ['name', 'description']) } : { ...given! };
    if (input.name !== undefined) definition.name = input.name;
    if (input.description !== undefined) definition.description = input.description;
    const valid = this.assertValid(definition, ['body', 'definition']);
    return this.toOut(await this.repository.create({ project_id: projectId, name: valid.name, description: valid.description ?? '', definition: JSON.stringify(valid), yaml_source: null, created_by: caller.userId }));
  }

  /** Creates a pipeline from YAML text, kept as written (comments included) for `GET …/yaml`. */
  async createFromYaml(caller: Caller, text: string, projectId?: number): Promise<PipelineOut> {
    if (projectId !== undefined) await this.access.project(caller, projectId, 'project.update');
    const parsed = parseYaml(text);
    const valid = this.assertValid(parsed.value, ['body'], parsed);
    return this.toOut(await this.repository.create({ project_id: projectId ?? null, name: valid.name, description: valid.description ?? '', definition: JSON.stringify(valid), yaml_source: text, created_by: caller.userId }));
  }

  async update(caller: Caller, id: number, input: PipelineUpdate): Promise<PipelineOut> {
    const row = await this.changeable(caller, id);
    if (input.definition !== undefined && input.yaml !== undefined) throw ValidationError.at(['body', 'yaml'], 'Give either definition or yaml, not both');
    let definition = JSON.parse(row.definition) as PipelineDefinition;
    let yamlSource = row.yaml_source;
    if (input.yaml !== undefined) {
      const parsed = parseYaml(input.yaml);
      definition = this.assertValid(parsed.value, ['body', 'yaml'], parsed);
      yamlSource = input.yaml;
    } else if (input.definition !== undefined) {
      definition = this.assertValid(input.definition, ['body', 'definition']);
    }
    if (input.name !== undefined) definition = { ...definition, name: input.name };
    if (input.description !== undefined) definition = { ...definition, description: input.description };
    const updated = await this.repository.update(id, { name: definition.name, description: definition.description ?? '', definition: JSON.stringify(definition), yaml_source: yamlSource });
    if (!updated) throw NotFoundError.of('Pipeline', id);
    return this.toOut(updated);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    await this.changeable(caller, id);
    await this.repository.delete(id);
  }

  /**
   * Starts a run as a background job. The pipeline is checked again against the project it runs on (its models,
   * classes and versions); a pipeline with a step that writes needs a project admin, others any reader.
   */
  async run(caller: Caller, id: number, input: RunRequest): Promise<PipelineRunOut> {
    const pipeline = await this.visible(caller, id);
    const projectId = input.project_id ?? pipeline.project_id;
    if (projectId === null) throw ValidationError.at(['body', 'project_id'], 'A global pipeline runs on a project: give project_id', 'missing');
    if (pipeline.project_id !== null && projectId !== pipeline.project_id) {
      throw ValidationError.at(['body', 'project_id'], `Pipeline ${id} belongs to project ${pipeline.project_id}`);
    }
    const definition = JSON.parse(pipeline.definition) as PipelineDefinition;
    const writes = this.writesData(definition);
    // A run reads the whole project (select_images takes every image) and reports on it: an annotator kept to their
    // assignments gets 403, as for exports.
    await this.access.wholeProject(caller, projectId, writes ? 'project.update' : 'project.read');
    if (caller.scope === 'read-only') throw new ForbiddenError('A read-only token cannot run pipelines');
    const facts = await this.repository.projectFacts(projectId);
    if (input.version_id != null && !facts.versionIds.includes(input.version_id)) {
      throw ValidationError.at(['body', 'version_id'], `Version ${input.version_id} is not a version of project ${projectId}`);
    }
    const problems = validateDefinition(definition, this.registry, facts);
    if (problems.length > 0) throw problemsError(problems, ['body', 'definition']);
    const steps: StepRunOut[] = definition.steps.map((s) => ({ id: s.id, type: s.type, status: 'pending', started_at: null, finished_at: null, duration_ms: null, progress: 0, outputs: {}, error: null }));
    const run = await this.repository.createRun({ pipeline_id: id, project_id: projectId, version_id: input.version_id ?? null, definition: JSON.stringify(definition), steps: JSON.stringify(steps), created_by: caller.userId });
    const job = await this.queue.enqueue<PipelineRunPayload>(PIPELINE_RUN_JOB, { runId: run.id }, { projectId, createdBy: caller.userId });
    await this.repository.setRunJob(run.id, job.id);
    return this.runOut({ ...run, job_id: job.id }, {});
  }

  async runs(caller: Caller, id: number, page: { limit: number; offset?: number; after?: number }): Promise<Page<PipelineRunOut>> {
    const pipeline = await this.visible(caller, id);
    if (pipeline.project_id !== null) await this.access.wholeProject(caller, pipeline.project_id, 'project.read');
    // A global pipeline's runs are listed for the projects whose runs the caller may read.
    const projects = pipeline.project_id !== null || caller.isAdmin ? null : await this.wholeProjects(caller, await this.repository.runProjects(id));
    const { items, total } = await this.repository.runs(id, page, projects);
    const writes = await this.repository.writeCounts(items.map((r) => r.id));
    return { items: items.map((r) => this.runOut(r, writes.get(r.id) ?? {})), total };
  }

  async getRun(caller: Caller, runId: number): Promise<PipelineRunOut> {
    const row = await this.repository.findRun(runId);
    await this.access.check(caller, row && { id: row.project_id, owner_id: row.owner_id }, 'project.read', `Pipeline run ${runId} not found`);
    await this.access.wholeProject(caller, row!.project_id, 'project.read');
    return this.runOut(row!, (await this.repository.writeCounts([runId])).get(runId) ?? {});
  }

  /**
   * Cancels a queued or running run: its running step ends `cancelled` now (the process running it aborts the step
   * within CANCEL_POLL_MS), and so do the steps after it; 409 once it has finished.
   */
  async cancelRun(caller: Caller, runId: number): Promise<PipelineRunOut> {
    const row = await this.repository.findRun(runId);
    const definition = row ? (JSON.parse(row.definition) as PipelineDefinition) : null;
    await this.access.check(caller, row && { id: row.project_id, owner_id: row.owner_id }, definition && this.writesData(definition) ? 'project.update' : 'project.read', `Pipeline run ${runId} not found`);
    await this.access.wholeProject(caller, row!.project_id, 'project.read');
    if (!(await this.repository.cancelRun(runId, (steps) => closeSteps(steps, 'cancelled', 'The run was cancelled')))) throw new ConflictError(`Pipeline run ${runId} has already finished (${row!.status})`);
    return this.getRun(caller, runId);
  }

  /** The job handler: runs the steps; the job's signal and report() are used when the queue provides them. */
  runJob(ctx: RunJobContext): Promise<object> {
    const reporter: RunReporter = {
      report: async (update) => {
        if (ctx.report) await ctx.report(update);
        else if (update.progress !== undefined) await ctx.progress(update.progress);
      },
    };
    return this.runner.run(ctx.payload.runId, ctx.signal, reporter);
  }

  /**
   * At boot: runs whose process died are failed (their running step too), and a step a dead process left `running`
   * in a cancelled run is cancelled. Runs other live workers are running (their jobs are not finished) are left alone.
   */
  async closeInterrupted(): Promise<void> {
    const error = 'interrupted by a restart';
    for (const run of await this.repository.interruptedRuns()) {
      const active = run.status === 'queued' || run.status === 'running';
      const steps = closeSteps(run.steps, active ? 'failed' : 'cancelled', active ? error : 'The run was cancelled');
      if (active) await this.repository.closeInterrupted(run.id, run.status, { status: 'failed', error, steps });
      else if (steps !== run.steps) await this.repository.closeInterrupted(run.id, run.status, { steps });
    }
  }

  /** The Caller a run acts as: the user who started it, with their current instance-admin flag. */
  async callerOf(userId: number | null): Promise<Caller> {
    const user = userId === null ? undefined : await this.repository.user(userId);
    if (!user) throw new Error('The user who started this run no longer exists');
    return { userId: user.id, email: user.email, isAdmin: user.is_admin === 1, tokenId: 0, tokenKind: 'api', scope: 'read-write', via: 'bearer' };
  }

  private writesData(definition: PipelineDefinition): boolean {
    return definition.steps.some((s) => this.registry.get('pipeline_step', s.type)?.step?.writes ?? false);
  }

  private assertValid(value: unknown, loc: (string | number)[], parsed?: ParsedText): PipelineDefinition {
    // Saved definitions are checked on their own; the project's models and classes are checked when it runs.
    const problems = validateDefinition(value, this.registry, null);
    if (problems.length > 0) throw problemsError(parsed ? locate(problems, parsed) : problems, loc);
    return value as PipelineDefinition;
  }

  private async facts(caller: Caller, projectId: number): Promise<ProjectFacts> {
    await this.access.project(caller, projectId, 'project.read');
    return this.repository.projectFacts(projectId);
  }

  private async visible(caller: Caller, id: number): Promise<PipelineRow & { owner_id: number | null }> {
    const row = await this.repository.find(id);
    if (!row) throw NotFoundError.of('Pipeline', id);
    if (row.project_id !== null) await this.access.check(caller, { id: row.project_id, owner_id: row.owner_id! }, 'project.read', `Pipeline ${id} not found`);
    return row;
  }

  /** A project pipeline changes with project admin rights; a global one by its creator or an instance admin. */
  private async changeable(caller: Caller, id: number): Promise<PipelineRow> {
    const row = await this.visible(caller, id);
    if (row.project_id !== null) await this.access.check(caller, { id: row.project_id, owner_id: row.owner_id! }, 'project.update', `Pipeline ${id} not found`);
    else if (row.created_by !== caller.userId && !caller.isAdmin) throw new ForbiddenError(`Only its creator or an instance admin changes global pipeline ${id}`);
    return row;
  }

  private async visibleProjects(caller: Caller, projects: { id: number; owner_id: number }[]): Promise<number[]> {
    const visible: number[] = [];
    for (const p of projects) if (await this.access.roleOf(caller, p)) visible.push(p.id);
    return visible;
  }

  /** Projects whose runs the caller may read: a run reports on every image, so not those that keep them to their assignments. */
  private async wholeProjects(caller: Caller, projects: { id: number; owner_id: number }[]): Promise<number[]> {
    const readable: number[] = [];
    for (const p of projects) {
      const role = await this.access.roleOf(caller, p);
      if (role && (await this.access.assignedOnlyUser(caller, p, role)) === null) readable.push(p.id);
    }
    return readable;
  }

  private toOut(row: PipelineRow): PipelineOut {
    const definition = JSON.parse(row.definition) as PipelineDefinition;
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      project_id: row.project_id,
      definition,
      writes_data: this.writesData(definition),
      created_by: row.created_by,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  private runOut(row: PipelineRunRow, writes: Record<string, number>): PipelineRunOut {
    return {
      id: row.id,
      pipeline_id: row.pipeline_id,
      project_id: row.project_id,
      version_id: row.version_id,
      status: row.status,
      progress: row.progress,
      eta_seconds: row.eta_seconds,
      job_id: row.job_id,
      steps: JSON.parse(row.steps) as StepRunOut[],
      outputs: JSON.parse(row.outputs) as Record<string, unknown>,
      error: row.error,
      writes,
      created_by: row.created_by,
      created_at: row.created_at,
      started_at: row.started_at,
      finished_at: row.finished_at,
    };
  }
}

/**
 * A run's steps once it stops early: the running one ends `status` with `error`; pending ones end `cancelled` after a
 * cancel and `skipped` after a failure. Answers the same text when no step changed.
 */
function closeSteps(text: string, status: 'cancelled' | 'failed', error: string): string {
  const steps = JSON.parse(text) as StepRunOut[];
  const now = new Date();
  let changed = false;
  for (const step of steps) {
    if (step.status === 'running') {
      Object.assign(step, { status, error, finished_at: now.toISOString(), duration_ms: step.started_at ? now.getTime() - Date.parse(step.started_at) : null });
      changed = true;
    } else if (step.status === 'pending') {
      step.status = status === 'cancelled' ? 'cancelled' : 'skipped';
      changed = true;
    }
  }
  return changed ? JSON.stringify(steps) : text;
}

function pick(value: Record<string, unknown> | null, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.flatMap((k) => (typeof value?.[k] === 'string' ? [[k, value[k]]] : [])));
}

function out(problems: Located[]): ValidationOut {
  return { valid: problems.length === 0, errors: problems.map(problemOut) };
}

function problemOut(p: Located): ProblemOut {
  return { path: pathText(p.path), message: p.message, ...(p.line !== undefined ? { line: p.line, column: p.column } : {}) };
}

function locate(problems: Problem[], parsed: ParsedText): Located[] {
  return problems.map((p) => {
    const at = parsed.locate(p.path);
    return at ? { ...p, line: at.line, column: at.column } : p;
  });
}

/** 422: FastAPI's issue list, each issue also carrying its definition path (and YAML line and column). */
function problemsError(problems: Located[], loc: (string | number)[]): ValidationError {
  const issues = problems.map((p) => ({ loc: [...loc, ...p.path], msg: p.message, type: 'pipeline_invalid', ...problemOut(p) })) as ValidationIssue[];
  return new ValidationError(issues);
}
