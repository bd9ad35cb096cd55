import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseTrainerLine, type TrainerEvent, type TrainerEventOf } from './trainer-protocol.js';

export interface TrainerRun {
  python: string;
  script: string;
  configPath: string;
  cwd: string;
  /** The child's whole environment (config.trainerEnv): the server's own (database URL, secrets) is not passed on. */
  env: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  onEvent?: (event: TrainerEvent) => void | Promise<void>;
  /** Grace between SIGTERM and SIGKILL on cancel. */
  killAfterMs?: number;
}

/** What a run that ended well reported: its `metrics`, its `artifact`s by name and its `finished` event. */
export interface TrainerResult {
  metrics: TrainerEventOf<'metrics'>;
  artifacts: Record<string, string>;
  finished: TrainerEventOf<'finished'>;
}

export interface TrainerOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  cancelled: boolean;
  /** Set when the trainer exited with 0 after its `metrics` and `finished` events. */
  result: TrainerResult | null;
  /** A broken protocol, the trainer's own `failed` event, else the end of its stderr. */
  error: string | null;
  events: number;
}

const STDERR_KEEP = 4000;

/**
 * Starts a trainer entry point as a child process in its own process group and follows its protocol events
 * (src/training/trainer-protocol.ts). On abort: SIGTERM to the group, SIGKILL after `killAfterMs`. Lines that are not
 * events are ignored (libraries print); an event that breaks the protocol stops the run.
 */
/** What the child's event lines said so far: the run's result pieces, or why the protocol broke. */
class EventTally {
  metrics: TrainerResult['metrics'] | null = null;
  finished: TrainerResult['finished'] | null = null;
  readonly artifacts: Record<string, string> = {};
  failure: string | null = null;
  /** Set when an event broke the protocol: the child is stopped and the run fails with it. */
  broken: string | null = null;
  events = 0;

  /** The line's event (null: not an event line, or the protocol is already broken); throws nothing. */
  take(line: string): TrainerEvent | null {
    if (this.broken) return null;
    let event: TrainerEvent | null;
    try {
      event = parseTrainerLine(line);
    } catch (err) {
      this.broken = (err as Error).message;
      return null;
    }
    if (!event) return null;
    this.events++;
    if (event.event === 'metrics') this.metrics = event;
    if (event.event === 'artifact') this.artifacts[event.name] = event.path;
    if (event.event === 'finished') this.finished = event;
    if (event.event === 'failed') this.failure = event.message;
    return event;
  }

  outcome(code: number | null, signal: NodeJS.Signals | null, cancelled: boolean, stderr: string): TrainerOutcome {
    const { metrics, finished, artifacts, broken } = this;
    const tail = stderr.trim().split('\n').filter((l) => !/Warning|warn\(|^\s/.test(l)).slice(-3).join(' | ');
    const result = !broken && code === 0 && metrics && finished ? { metrics, artifacts, finished } : null;
    const exited = `the trainer exited with ${signal ?? `code ${code}`}${code === 0 ? ' without its metrics and finished events' : ''}`;
    return { code, signal, cancelled, result, error: result ? null : broken ?? this.failure ?? (tail || exited), events: this.events };
  }
}

/** Stops the child's whole process group: SIGTERM, then SIGKILL after `killAfterMs` unless it has closed (`stopped`). */
function stopper(child: ChildProcess, killAfterMs: number): { stop: () => void; stopped: () => void } {
  let killTimer: NodeJS.Timeout | null = null;
  const kill = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
  return {
    stop: () => {
      kill('SIGTERM');
      killTimer = setTimeout(() => kill('SIGKILL'), killAfterMs);
      killTimer.unref();
    },
    stopped: () => {
      if (killTimer) clearTimeout(killTimer);
    },
  };
}

export function runTrainer(options: TrainerRun): Promise<TrainerOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.python, [options.script, '--config', options.configPath], {
      cwd: options.cwd,
      env: { ...options.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const tally = new EventTally();
    let stderr = '';
    let cancelled = false;
    let handling = Promise.resolve();
    const { stop, stopped } = stopper(child, options.killAfterMs ?? 5000);
    const onAbort = () => {
      cancelled = true;
      stop();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      options.signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const wasBroken = tally.broken;
      const event = tally.take(line);
      if (!wasBroken && tally.broken) stop();
      // Events are handled one after another, in order, without blocking the pipe.
      if (event) handling = handling.then(() => options.onEvent?.(event)).catch(() => undefined);
    });
    child.on('close', (code, signal) => {
      options.signal?.removeEventListener('abort', onAbort);
      stopped();
      void handling.then(() => resolve(tally.outcome(code, signal, cancelled, stderr)));
    });
  });
}
