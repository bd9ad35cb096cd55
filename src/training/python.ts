import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../config.js';

const run = promisify(execFile);

/** The trainer/ folder at the repository root (next to src/ and, once built, dist/). */
export const TRAINER_DIR = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'trainer', 'probe.py'))) return join(dir, 'trainer');
    dir = resolve(dir, '..');
  }
  return resolve('trainer');
})();

/** The configured interpreter (config.python), for tests and benchmarks that run a trainer directly. */
export function pythonPath(): string {
  return loadConfig().python;
}

/** What the interpreter has: package versions (null when missing), CUDA, the `yolo` command. */
export interface PythonProbe {
  python: string | null;
  numpy: string | null;
  PIL: string | null;
  torch: string | null;
  torchvision: string | null;
  sklearn: string | null;
  ultralytics: string | null;
  cuda: boolean;
  yolo: string | null;
  /** Set when the interpreter could not be run at all. */
  error?: string;
}

const PROBE_TTL_MS = 5 * 60_000;
const cache = new Map<string, { at: number; probe: Promise<PythonProbe> }>();

/** Runs trainer/probe.py in the environment the trainers get (`env`: config.trainerEnv), cached for five minutes. */
export function probePython(python: string, env: Readonly<Record<string, string>>): Promise<PythonProbe> {
  const hit = cache.get(python);
  if (hit && Date.now() - hit.at < PROBE_TTL_MS) return hit.probe;
  const probe = run(python, [join(TRAINER_DIR, 'probe.py')], { timeout: 60_000, env: { ...env, PYTHONDONTWRITEBYTECODE: '1' } }).then(
    ({ stdout }) => JSON.parse(stdout.trim().split('\n').pop()!) as PythonProbe,
    (err: Error) => ({ python: null, numpy: null, PIL: null, torch: null, torchvision: null, sklearn: null, ultralytics: null, cuda: false, yolo: null, error: `${python} could not be run: ${err.message.split('\n')[0]}` }),
  );
  cache.set(python, { at: Date.now(), probe });
  return probe;
}
