import { isDeepStrictEqual } from 'node:util';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError, ValidationError, type ValidationIssue } from '../../http/errors.js';
import type { Page } from '../../http/pagination.js';
import type { JobContext, JobQueue } from '../../jobs/job-queue.js';
import type { PluginRegistry } from '../../plugins/plugin-registry.js';
import { ppeExample } from './pipeline-example.logic.js';
import { ownerOf, type PipelineOwner, type PipelineReach } from './pipeline-reach.service.js';
import type { PipelineRunner, RunReporter } from './pipeline-runner.service.js';
import { parseJson, parseYaml, pathText, toYaml, type ParsedText } from './pipeline-text.logic.js';
import { validateDefinition, type Problem, type ProjectFacts } from './pipeline-validation.logic.js';
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
    private readonly reach: PipelineReach,
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

  /**
   * Every problem of a definition: its shape, each step's params against the schema of the route it stands for, and
   * the records it names by id (the given project's or organization's, else of a project the caller sees); with a
   * project, also the models, classes and versions it names by name.
   */
  async validate(caller: Caller, value: unknown, query: { project_id?: number; org_id?: number }): Promise<ValidationOut> {
    return out(await this.problems(caller, value, query));
  }

  async validateYaml(caller: Caller, text: string, query: { project_id?: number; org_id?: number }): Promise<ValidationOut> {
    const parsed = parseYaml(text);
    return out(locate(await this.problems(caller, parsed.value, query), parsed));
  }

  /** A JSON body read as text (so that a syntax error can name its line and column). */
  parseJsonBody(text: string): unknown {
    return parseJson(text);
  }

  async list(caller: Caller, query: { project_id?: number; org_id?: number }): Promise<PipelineOut[]> {
    return (await this.repository.list(await this.reach.listing(caller, query))).map((r) => this.toOut(r));
  }

  async get(caller: Caller, id: number): Promise<PipelineOut> {
    return this.toOut(await this.reach.visible(caller, id));
  }

  async yaml(caller: Caller, id: number): Promise<string> {
    const row = await this.reach.visible(caller, id);
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

  /** Creates a pipeline; an absent, null or `{}` definition is the protective-equipment example. */
  async create(caller: Caller, input: PipelineCreate): Promise<PipelineOut> {
    const owner = await this.reach.newOwner(caller, input.project_id, input.org_id, ['body']);
    const given = input.definition ?? null;
    // An empty steps list is a mistake to point out, not a request for the example.
    const definition: Record<string, unknown> = given === null || Object.keys(given).length === 0 ? ppeExample() : { ...given };
    if (input.name !== undefined) definition.name = input.name;
    if (input.description !== undefined) definition.description = input.description;
    const valid = await this.assertValid(caller, definition, owner, ['body', 'definition']);
    return this.toOut(await this.repository.create({ ...ownerColumns(owner), name: valid.name, description: valid.description ?? '', definition: JSON.stringify(valid), yaml_source: null, created_by: caller.userId }));
  }

  /** Creates a pipeline from YAML text, kept as written (comments included) for `GET …/yaml`. */
  async createFromYaml(caller: Caller, text: string, query: { project_id?: number; org_id?: number }): Promise<PipelineOut> {
    const owner = await this.reach.newOwner(caller, query.project_id, query.org_id, ['query']);
    const parsed = parseYaml(text);
    const valid = await this.assertValid(caller, parsed.value, owner, ['body'], parsed);
    return this.toOut(await this.repository.create({ ...ownerColumns(owner), name: valid.name, description: valid.description ?? '', definition: JSON.stringify(valid), yaml_source: text, created_by: caller.userId }));
  }

  async update(caller: Caller, id: number, input: PipelineUpdate): Promise<PipelineOut> {
    const row = await this.reach.changeable(caller, id);
    if (input.definition !== undefined && input.yaml !== undefined) throw ValidationError.at(['body', 'yaml'], 'Give either definition or yaml, not both');
    let definition = JSON.parse(row.definition) as PipelineDefinition;
    let yamlSource = row.yaml_source;
    if (input.yaml !== undefined) {
      const parsed = parseYaml(input.yaml);
      definition = await this.assertValid(caller, parsed.value, ownerOf(row), ['body', 'yaml'], parsed);
      yamlSource = input.yaml;
    } else if (input.definition !== undefined) {
      definition = await this.assertValid(caller, input.definition, ownerOf(row), ['body', 'definition']);
    }
    if (input.name !== undefined) definition = { ...definition, name: input.name };
    if (input.description !== undefined) definition = { ...definition, description: input.description };
    const updated = await this.repository.update(id, { name: definition.name, description: definition.description ?? '', definition: JSON.stringify(definition), yaml_source: yamlSource });
    if (!updated) throw NotFoundError.of('Pipeline', id);
    return this.toOut(updated);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    await this.reach.changeable(caller, id);
    await this.repository.delete(id);
  }

  /**
   * Starts a run as a background job on a project the caller may run the pipeline on (see PipelineReach). The
   * pipeline is checked again against that project (its models, classes and versions); a pipeline with a step that
   * writes needs a project admin, others any reader. The run keeps the definition it runs.
   */
  async run(caller: Caller, id: number, input: RunRequest): Promise<PipelineRunOut> {
    const pipeline = await this.reach.visible(caller, id);
    const definition = JSON.parse(pipeline.definition) as PipelineDefinition;
    const { id: projectId } = await this.reach.runProject(caller, pipeline, input.project_id, this.writesData(definition) ? 'project.update' : 'project.read');
    const facts = await this.repository.projectFacts(projectId);
    if (input.version_id != null && !facts.versionIds.includes(input.version_id)) {
      throw ValidationError.at(['body', 'version_id'], `Version ${input.version_id} is not a version of project ${projectId}`);
    }
    const problems = await this.allProblems(caller, definition, { kind: 'project', id: projectId }, facts);
    if (problems.length > 0) throw problemsError(problems, ['body', 'definition']);
    const steps: StepRunOut[] = definition.steps.map((s) => ({ id: s.id, type: s.type, status: 'pending', started_at: null, finished_at: null, duration_ms: null, progress: 0, outputs: {}, error: null }));
    const run = await this.repository.createRun({ pipeline_id: id, project_id: projectId, version_id: input.version_id ?? null, definition: JSON.stringify(definition), steps: JSON.stringify(steps), created_by: caller.userId });
    const job = await this.queue.enqueue<PipelineRunPayload>(PIPELINE_RUN_JOB, { runId: run.id }, { projectId, createdBy: caller.userId });
    await this.repository.setRunJob(run.id, job.id);
    return this.runOut({ ...run, job_id: job.id }, {}, await this.waitingFor({ ...run, job_id: job.id }));
  }

  async runs(caller: Caller, id: number, page: { limit: number; offset?: number; after?: number }): Promise<Page<PipelineRunOut>> {
    const pipeline = await this.reach.visible(caller, id);
    if (pipeline.project_id !== null) await this.access.wholeProject(caller, pipeline.project_id, 'project.read');
    // Runs of an organization's or a creator's pipeline are listed for the projects whose runs the caller may read.
    const projects = pipeline.project_id !== null || caller.isAdmin ? null : await this.wholeProjects(caller, await this.repository.runProjects(id));
    const { items, total } = await this.repository.runs(id, page, projects);
    const writes = await this.repository.writeCounts(items.map((r) => r.id));
    const waiting = await Promise.all(items.map((r) => this.waitingFor(r)));
    return { items: items.map((r, i) => this.runOut(r, writes.get(r.id) ?? {}, waiting[i])), total };
  }

  async getRun(caller: Caller, runId: number): Promise<PipelineRunOut> {
    const row = await this.repository.findRun(runId);
    await this.access.check(caller, row && { id: row.project_id, owner_id: row.owner_id }, 'project.read', `Pipeline run ${runId} not found`);
    await this.access.wholeProject(caller, row!.project_id, 'project.read');
    return this.runOut(row!, (await this.repository.writeCounts([runId])).get(runId) ?? {}, await this.waitingFor(row!));
  }

  /** What a queued run waits for, in words: the jobs ahead of it, or a worker to take it; null once it started. */
  private async waitingFor(row: Pick<PipelineRunRow, 'status' | 'job_id'>): Promise<string | null> {
    if (row.status !== 'queued' || row.job_id === null) return null;
    const { jobs, total } = await this.repository.jobsAhead(row.job_id);
    if (total === 0) return 'Waiting for a worker to take it: no job is ahead of it (a run that stays queued means no worker process is running)';
    const named = jobs.map((j) => `${j.name} #${j.id} (${j.status})`).join(', ');
    return `Waiting for ${total} job${total === 1 ? '' : 's'} ahead of it: ${named}${total > jobs.length ? `, and ${total - jobs.length} more` : ''}`;
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

  /** The definition, once it has no problem: its shape, its steps' params, and the records it names by id are the owner's. */
  private async assertValid(caller: Caller, value: unknown, owner: PipelineOwner, loc: (string | number)[], parsed?: ParsedText): Promise<PipelineDefinition> {
    // A saved definition is checked without a project's models and classes by name: those are checked when it runs.
    const problems = await this.allProblems(caller, value, owner, null);
    if (problems.length > 0) throw problemsError(parsed ? locate(problems, parsed) : problems, loc);
    return value as PipelineDefinition;
  }

  private async problems(caller: Caller, value: unknown, query: { project_id?: number; org_id?: number }): Promise<Problem[]> {
    const owner = await this.reach.validationOwner(caller, query);
    return this.allProblems(caller, value, owner, owner.kind === 'project' ? await this.repository.projectFacts(owner.id) : null);
  }

  /** The definition's problems (with `facts`, also the project's models and classes by name), and its records named by id that are not the owner's. */
  private async allProblems(caller: Caller, value: unknown, owner: PipelineOwner, facts: ProjectFacts | null): Promise<Problem[]> {
    const problems = validateDefinition(value, this.registry, facts);
    const named = new Set(problems.map((p) => pathText(p.path)));
    return [...problems, ...(await this.reach.referenceProblems(caller, value, owner)).filter((p) => !named.has(pathText(p.path)))];
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
      org_id: row.org_id,
      definition,
      writes_data: this.writesData(definition),
      created_by: row.created_by,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  private runOut(row: PipelineRunRow, writes: Record<string, number>, waitingFor: string | null = null): PipelineRunOut {
    return {
      id: row.id,
      pipeline_id: row.pipeline_id,
      project_id: row.project_id,
      version_id: row.version_id,
      status: row.status,
      progress: row.progress,
      eta_seconds: row.eta_seconds,
      job_id: row.job_id,
      waiting_for: waitingFor,
      definition: JSON.parse(row.definition) as PipelineDefinition,
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

function ownerColumns(owner: PipelineOwner): { project_id: number | null; org_id: number | null } {
  return { project_id: owner.kind === 'project' ? owner.id : null, org_id: owner.kind === 'org' ? owner.id : null };
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
