import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** An event the trainer printed (one JSON object per stdout line, with an `event` member). */
export interface TrainerEvent {
  event: 'start' | 'progress' | 'epoch' | 'final' | 'error' | string;
  [key: string]: unknown;
}

export interface TrainerRun {
  python: string;
  script: string;
  configPath: string;
  cwd: string;
  signal?: AbortSignal;
  onEvent?: (event: TrainerEvent) => void | Promise<void>;
  /** Grace between SIGTERM and SIGKILL on cancel. */
  killAfterMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface TrainerOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  cancelled: boolean;
  final: TrainerEvent | null;
  /** The trainer's own `error` event, else the end of its stderr. */
  error: string | null;
  events: number;
}

const STDERR_KEEP = 4000;

/**
 * Starts a trainer entry point as a child process in its own process group and follows its JSON lines. On abort:
 * SIGTERM to the group, SIGKILL after `killAfterMs`. Lines that are not JSON events are ignored (libraries print).
 */
export function runTrainer(options: TrainerRun): Promise<TrainerOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.python, [options.script, '--config', options.configPath], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    let final: TrainerEvent | null = null;
    let trainerError: string | null = null;
    let events = 0;
    let cancelled = false;
    let killTimer: NodeJS.Timeout | null = null;
    let handling = Promise.resolve();
    const kill = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        child.kill(signal);
      }
    };
    const onAbort = () => {
      cancelled = true;
      kill('SIGTERM');
      killTimer = setTimeout(() => kill('SIGKILL'), options.killAfterMs ?? 5000);
      killTimer.unref();
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
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      let event: TrainerEvent;
      try {
        event = JSON.parse(line) as TrainerEvent;
      } catch {
        return;
      }
      if (typeof event.event !== 'string') return;
      events++;
      if (event.event === 'final') final = event;
      if (event.event === 'error') trainerError = String(event.message ?? 'the trainer failed');
      // Events are handled one after another, in order, without blocking the pipe.
      handling = handling.then(() => options.onEvent?.(event)).catch(() => undefined);
    });
    child.on('close', (code, signal) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      void handling.then(() => {
        const tail = stderr.trim().split('\n').filter((l) => !/Warning|warn\(|^\s/.test(l)).slice(-3).join(' | ');
        resolve({
          code,
          signal,
          cancelled,
          final: code === 0 ? final : null,
          error: code === 0 && final ? null : trainerError ?? (tail || `the trainer exited with ${signal ?? `code ${code}`}`),
          events,
        });
      });
    });
  });
}
