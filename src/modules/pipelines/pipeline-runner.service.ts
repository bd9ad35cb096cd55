import type { PluginRegistry, StepData } from '../../plugins/plugin-registry.js';
import { topologicalOrder } from './pipeline-validation.logic.js';
import type { PipelinesRepository } from './pipelines.repository.js';
import type { PipelineDefinition, StepRunOut } from './pipelines.schemas.js';

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
    const row = await this.repository.findRun(runId);
    if (!row) throw new Error(`Pipeline run ${runId} was deleted before it started`);
    if (!(await this.repository.startRun(runId))) return { status: row.status };
    const definition = JSON.parse(row.definition) as PipelineDefinition;
    const steps = JSON.parse(row.steps) as StepRunOut[];
    const outputs: Record<string, unknown> = {};
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const started = Date.now();
    let lastWrite = 0;
    let stepFraction = 0;
    let done = 0;

    const progress = () => Math.min(1, (done + stepFraction) / steps.length);
    const save = async (force = false) => {
      const now = Date.now();
      if (!force && now - lastWrite < PROGRESS_WRITE_MS) return;
      lastWrite = now;
      const p = progress();
      const eta = p > 0.01 ? ((now - started) / 1000) * (1 - p) / p : null;
      await this.repository.updateRun(runId, { steps: JSON.stringify(steps), outputs: JSON.stringify(outputs), progress: p, eta_seconds: eta });
      await reporter?.report({ progress: p, eta_seconds: eta ?? undefined });
      if ((await this.repository.runStatus(runId)) === 'cancelled') controller.abort();
    };

    const ids = new Map(definition.steps.map((s, i) => [s.id, i]));
    const needsOf = new Map(definition.steps.map((s, i) => [i, (s.needs ?? []).map((n) => ids.get(n)!)]));
    const order = topologicalOrder(definition.steps.length, needsOf);
    const data = new Map<number, StepData>();
    let failure: { stepId: string; message: string; cancelled: boolean } | null = null;

    const poll = setInterval(() => {
      this.repository.runStatus(runId).then((status) => {
        if (status === 'cancelled') controller.abort();
      }, () => undefined);
    }, CANCEL_POLL_MS);
    try {
      for (const index of order) {
        const step = definition.steps[index];
        const state = steps[index];
        if (failure) {
          state.status = failure.cancelled ? 'cancelled' : 'skipped';
          continue;
        }
        const input: StepData = {};
        for (const need of needsOf.get(index) ?? []) mergeInto(input, data.get(need) ?? {});
        state.status = 'running';
        state.started_at = new Date().toISOString();
        // What a webhook posts: the run so far.
        input.summary = { run_id: runId, pipeline_id: row.pipeline_id, steps: steps.map((s) => ({ id: s.id, type: s.type, status: s.status, outputs: s.outputs, error: s.error })) };
        stepFraction = 0;
        await save(true);
        const t0 = performance.now();
        try {
          const impl = this.registry.get('pipeline_step', step.type)?.step;
          if (!impl) throw new Error(`Step type '${step.type}' is not installed`);
          const result = await untilAborted(() => impl.execute(
            {
              runId,
              stepId: step.id,
              projectId: row.project_id,
              versionId: row.version_id,
              userId: row.created_by,
              signal: controller.signal,
              progress: (fraction) => {
                stepFraction = Math.max(0, Math.min(1, fraction));
                state.progress = stepFraction;
                void save().catch(() => undefined);
              },
            },
            step.params ?? {},
            input,
          ), controller.signal);
          const own: StepData = {};
          mergeInto(own, input);
          delete own.summary;
          mergeInto(own, result.data ?? {});
          data.set(index, own);
          state.status = 'succeeded';
          state.outputs = result.outputs;
          outputs[step.id] = result.outputs;
          if (step.type === 'report') outputs.report = result.outputs.report;
        } catch (err) {
          const cancelled = controller.signal.aborted;
          const message = err instanceof Error ? err.message : String(err);
          state.status = cancelled ? 'cancelled' : 'failed';
          state.error = cancelled ? 'The run was cancelled' : message;
          failure = { stepId: step.id, message, cancelled };
        }
        state.finished_at = new Date().toISOString();
        state.duration_ms = Math.round(performance.now() - t0);
        state.progress = state.status === 'succeeded' ? 1 : state.progress;
        done++;
        stepFraction = 0;
      }
    } finally {
      clearInterval(poll);
      signal?.removeEventListener('abort', onAbort);
    }
    const status = failure ? (failure.cancelled ? 'cancelled' : 'failed') : 'succeeded';
    const error = failure ? `Step '${failure.stepId}' ${failure.cancelled ? 'was cancelled' : `failed: ${failure.message}`}` : null;
    await this.repository.finishRun(runId, status, { steps: JSON.stringify(steps), outputs: JSON.stringify(outputs), error });
    if (failure && !failure.cancelled) throw new Error(error!);
    return { run_id: runId, status };
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
