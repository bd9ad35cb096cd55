import { JobReleasedError } from '../../jobs/job-queue.js';
import type { PluginRegistry, StepData, StepRunContext } from '../../plugins/plugin-registry.js';
import { topologicalOrder } from './pipeline-validation.logic.js';
import type { PipelinesRepository } from './pipelines.repository.js';
import type { PipelineDefinition, PipelineRunRow, PipelineStep, StepRunOut } from './pipelines.schemas.js';

/** How often a running pipeline records its progress. */
const PROGRESS_WRITE_MS = 500;
/** How often the process running a pipeline looks for a cancel in the run's record (any process may have made it). */
export const CANCEL_POLL_MS = 250;

export interface RunReporter {
  report(update: { progress?: number; message?: string; eta_seconds?: number }): void | Promise<void>;
}

/**
 * Runs a pipeline run's steps in dependency order. Each step's status, timings, outputs and error are recorded on
 * the run as it goes; progress (0–1) with an ETA from the time spent so far. A cancel (the run's record set to
 * `cancelled`, looked for every CANCEL_POLL_MS, or `signal`) aborts the running step's signal and ends the step
 * `cancelled` at once, even when the step (a plugin, a webhook that never answers) does not stop by itself. A failed
 * step fails the run and skips what comes after it; what earlier steps wrote stays recorded under the run id.
 */
export class PipelineRunner {
  constructor(
    private readonly repository: PipelinesRepository,
    private readonly registry: PluginRegistry,
  ) {}

  async run(runId: number, signal?: AbortSignal, reporter?: RunReporter): Promise<object> {
    let row = await this.repository.findRun(runId);
    if (!row) throw new Error(`Pipeline run ${runId} was deleted before it started`);
    // Its job is running again while the run says running: the process that ran it died (its worker was killed); the
    // run starts over from its first step, as the job does.
    if (row.status === 'running') {
      await this.repository.requeueRun(runId, pendingSteps(row.steps));
      row = (await this.repository.findRun(runId))!;
    }
    if (!(await this.repository.startRun(runId))) return { status: row.status };
    const progress = new RunProgress(this.repository, runId, JSON.parse(row.steps) as StepRunOut[], reporter);
    const onAbort = () => progress.controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const poll = progress.pollForCancel();
    let failure: Failure | null;
    try {
      failure = await this.runSteps(row, JSON.parse(row.definition) as PipelineDefinition, progress);
    } finally {
      clearInterval(poll);
      signal?.removeEventListener('abort', onAbort);
    }
    // A shutdown released the job: the run goes back to the queue with it (not cancelled), to start over elsewhere.
    if (signal?.reason instanceof JobReleasedError) {
      await this.repository.requeueRun(runId, pendingSteps(row.steps));
      throw signal.reason;
    }
    const status = failure ? (failure.cancelled ? 'cancelled' : 'failed') : 'succeeded';
    const error = failure ? `Step '${failure.stepId}' ${failure.cancelled ? 'was cancelled' : `failed: ${failure.message}`}` : null;
    await this.repository.finishRun(runId, status, { steps: JSON.stringify(progress.steps), outputs: JSON.stringify(progress.outputs), error });
    if (failure && !failure.cancelled) throw new Error(error!);
    return { run_id: runId, status };
  }

  /** The steps in dependency order, each given what the steps it needs produced; after a failure the rest are skipped. */
  private async runSteps(row: PipelineRunRow, definition: PipelineDefinition, progress: RunProgress): Promise<Failure | null> {
    const ids = new Map(definition.steps.map((s, i) => [s.id, i]));
    const needsOf = new Map(definition.steps.map((s, i) => [i, (s.needs ?? []).map((n) => ids.get(n)!)]));
    const data = new Map<number, StepData>();
    let failure: Failure | null = null;
    for (const index of topologicalOrder(definition.steps.length, needsOf)) {
      const state = progress.steps[index];
      if (failure) {
        state.status = failure.cancelled ? 'cancelled' : 'skipped';
        continue;
      }
      const input: StepData = {};
      for (const need of needsOf.get(index) ?? []) mergeInto(input, data.get(need) ?? {});
      const outcome = await this.runStep(row, definition.steps[index], state, input, progress);
      if ('failure' in outcome) failure = outcome.failure;
      else data.set(index, outcome.data);
    }
    return failure;
  }

  /** One step: recorded running, executed until it ends or the run is cancelled, then recorded with its outcome. */
  private async runStep(row: PipelineRunRow, step: PipelineStep, state: StepRunOut, input: StepData, progress: RunProgress): Promise<{ data: StepData } | { failure: Failure }> {
    state.status = 'running';
    state.started_at = new Date().toISOString();
    // What a webhook posts: the run so far.
    input.summary = { run_id: row.id, pipeline_id: row.pipeline_id, steps: progress.steps.map((s) => ({ id: s.id, type: s.type, status: s.status, outputs: s.outputs, error: s.error })) };
    progress.stepFraction = 0;
    await progress.save(true);
    const t0 = performance.now();
    let outcome: { data: StepData } | { failure: Failure };
    try {
      const impl = this.registry.get('pipeline_step', step.type)?.step;
      if (!impl) throw new Error(`Step type '${step.type}' is not installed`);
      const context: StepRunContext = {
        runId: row.id,
        stepId: step.id,
        projectId: row.project_id,
        versionId: row.version_id,
        userId: row.created_by,
        signal: progress.controller.signal,
        progress: (fraction) => {
          progress.stepFraction = Math.max(0, Math.min(1, fraction));
          state.progress = progress.stepFraction;
          void progress.save().catch(() => undefined);
        },
      };
      const result = await untilAborted(() => impl.execute(context, step.params ?? {}, input), progress.controller.signal);
      const own: StepData = {};
      mergeInto(own, input);
      delete own.summary;
      mergeInto(own, result.data ?? {});
      state.status = 'succeeded';
      state.outputs = result.outputs;
      progress.outputs[step.id] = result.outputs;
      if (step.type === 'report') progress.outputs.report = result.outputs.report;
      outcome = { data: own };
    } catch (err) {
      const cancelled = progress.controller.signal.aborted;
      const message = err instanceof Error ? err.message : String(err);
      state.status = cancelled ? 'cancelled' : 'failed';
      state.error = cancelled ? 'The run was cancelled' : message;
      outcome = { failure: { stepId: step.id, message, cancelled } };
    }
    state.finished_at = new Date().toISOString();
    state.duration_ms = Math.round(performance.now() - t0);
    state.progress = state.status === 'succeeded' ? 1 : state.progress;
    progress.done++;
    progress.stepFraction = 0;
    return outcome;
  }
}

/** The step that ended a run early, and whether a cancel ended it. */
interface Failure {
  stepId: string;
  message: string;
  cancelled: boolean;
}

/**
 * A run's record as it goes: the steps' states and outputs, written at most every PROGRESS_WRITE_MS (or when forced)
 * with the progress and an ETA from the time spent so far, and the controller a cancel aborts.
 */
class RunProgress {
  readonly outputs: Record<string, unknown> = {};
  readonly controller = new AbortController();
  /** Steps finished, and how far the running one is (0–1). */
  done = 0;
  stepFraction = 0;
  private readonly started = Date.now();
  private lastWrite = 0;

  constructor(
    private readonly repository: PipelinesRepository,
    private readonly runId: number,
    readonly steps: StepRunOut[],
    private readonly reporter: RunReporter | undefined,
  ) {}

  async save(force = false): Promise<void> {
    const now = Date.now();
    if (!force && now - this.lastWrite < PROGRESS_WRITE_MS) return;
    this.lastWrite = now;
    const p = Math.min(1, (this.done + this.stepFraction) / this.steps.length);
    const eta = p > 0.01 ? ((now - this.started) / 1000) * (1 - p) / p : null;
    await this.repository.updateRun(this.runId, { steps: JSON.stringify(this.steps), outputs: JSON.stringify(this.outputs), progress: p, eta_seconds: eta });
    await this.reporter?.report({ progress: p, eta_seconds: eta ?? undefined });
    if ((await this.repository.runStatus(this.runId)) === 'cancelled') this.controller.abort();
  }

  /** Looks for a cancel in the run's record every CANCEL_POLL_MS (any process may have made it); clearInterval stops it. */
  pollForCancel(): ReturnType<typeof setInterval> {
    return setInterval(() => {
      this.repository.runStatus(this.runId).then((status) => {
        if (status === 'cancelled') this.controller.abort();
      }, () => undefined);
    }, CANCEL_POLL_MS);
  }
}

/**
 * The step's outcome, or a rejection as soon as `signal` aborts: a step that ignores its signal cannot keep a
 * cancelled run's step `running` (what it still does in the background is no longer recorded).
 */
function untilAborted<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('The run was cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('The run was cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = () => signal.removeEventListener('abort', onAbort);
    Promise.resolve()
      .then(work)
      .then((value) => { settle(); resolve(value); }, (err: unknown) => { settle(); reject(err); });
  });
}

/** Later data of a kind replaces earlier data of the same kind. */
function mergeInto(target: StepData, source: StepData): void {
  for (const [k, v] of Object.entries(source)) if (v !== undefined) target[k] = v;
}

/** The steps as a run that has not started has them: all pending, nothing recorded. */
function pendingSteps(text: string): string {
  const steps = JSON.parse(text) as StepRunOut[];
  return JSON.stringify(steps.map((step) => ({ ...step, status: 'pending', started_at: null, finished_at: null, duration_ms: null, progress: 0, outputs: {}, error: null })));
}
