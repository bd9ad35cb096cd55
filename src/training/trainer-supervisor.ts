import { JobCancelledError, type JobReport } from '../jobs/job-queue.js';
import type { Metrics } from '../lib/metrics.js';
import { runTrainer, type TrainerRun } from './trainer-process.js';
import type { TrainerEvent, TrainerEventOf } from './trainer-protocol.js';

/** One row of a run's history: `{epoch, <metric>: number | null, …}`. */
export type HistoryRow = Record<string, unknown>;

/** Where a supervised run's progress goes while it runs (the experiment's record and the job's). */
export interface RunRecorder {
  /** The trainer started: what it loaded and where it runs. */
  started(event: TrainerEventOf<'started'>): Promise<void>;
  /** Epochs ended; called at most once a second, with the history so far. */
  epochs(epoch: number, latest: Record<string, number | null>, history: HistoryRow[]): Promise<void>;
  /** Progress for people watching the job. */
  report(report: JobReport): Promise<void>;
}

/** A run that ended well, in the records' terms. */
export interface TrainingResult {
  task: string;
  metrics: Record<string, number | null>;
  history: HistoryRow[];
  /** The last epoch done. */
  epoch: number;
  per_class: Record<string, unknown>[];
  confusion: number[][] | null;
  best_epoch: number | null;
  evaluation: Record<string, unknown> | null;
  class_names: string[] | null;
  artifacts: Record<string, string>;
  environment: Record<string, unknown>;
  /** The parameters the trainer ran with (its defaults filled in). */
  params: Record<string, unknown>;
}

const HISTORY_WRITE_MS = 1000;

/**
 * Runs a trainer and follows it to the end: records its start, its epochs (throttled) and its progress, and turns
 * its final events into a TrainingResult. Throws JobCancelledError when the run was cancelled and an Error with the
 * trainer's reason when it failed. Each epoch is counted in `counted.metrics` under the run's adapter.
 */
export async function superviseTraining(
  run: Omit<TrainerRun, 'onEvent'> & { signal: AbortSignal },
  recorder: RunRecorder,
  counted: { metrics: Metrics; adapter: string },
): Promise<TrainingResult> {
  const history: HistoryRow[] = [];
  let epoch = 0;
  let lastWrite = 0;
  const onEvent = async (event: TrainerEvent) => {
    if (event.event === 'started') await recorder.started(event);
    if (event.event === 'epoch') {
      const { event: _event, protocol: _protocol, progress, eta_seconds, epochs, ...row } = event;
      history.push(row);
      epoch = row.epoch;
      counted.metrics.epoch(counted.adapter);
      const now = Date.now();
      if (now - lastWrite > HISTORY_WRITE_MS) {
        lastWrite = now;
        await recorder.epochs(epoch, numericMetrics(row), history);
      }
      await recorder.report({ progress: progress || undefined, eta_seconds, message: `epoch ${epoch}/${epochs}` });
    }
    if (event.event === 'progress') await recorder.report({ progress: event.progress || undefined, eta_seconds: event.eta_seconds, message: event.message });
  };
  const outcome = await runTrainer({ ...run, onEvent });
  if (outcome.cancelled || run.signal.aborted) throw new JobCancelledError();
  if (!outcome.result) throw new Error(outcome.error ?? 'the trainer ended without results');
  const { metrics, artifacts, finished } = outcome.result;
  const fullHistory = history.length ? history : metrics.history ?? [];
  const last = fullHistory.length ? Number(fullHistory[fullHistory.length - 1].epoch) || 0 : 0;
  return {
    task: metrics.task,
    metrics: numericMetrics(metrics.metrics),
    history: fullHistory,
    epoch: Math.max(epoch, last),
    per_class: metrics.per_class,
    confusion: metrics.confusion ?? null,
    best_epoch: metrics.best_epoch ?? null,
    evaluation: metrics.evaluation ?? null,
    class_names: metrics.class_names ?? null,
    artifacts,
    environment: finished.env,
    params: finished.params,
  };
}

/** The metrics of a history row or a result: numbers and nulls, without the row's epoch, time and learning rate. */
export function numericMetrics(values: Record<string, unknown>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [key, value] of Object.entries(values ?? {})) {
    if (key === 'epoch' || key === 'time' || key === 'lr') continue;
    if (typeof value === 'number' && Number.isFinite(value)) out[key] = value;
    else if (value === null) out[key] = null;
  }
  return out;
}
