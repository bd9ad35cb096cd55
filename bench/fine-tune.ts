/**
 * Fine-tuning (issue 28), through Versa's HTTP API as a user drives it: the server runs as its own process, the
 * shared indian-vehicles-yolo folder is imported twice (`POST /api/projects/import/folder`, IMPORT_ROOT =
 * ../shared/datasets), the second copy keeps every other training image (by file name; valid and test whole), and a
 * detector trained on that half is the base. Then, on all the training images: a short run from the base
 * (`base_model_id`, across projects), the same budget from scratch, and a long run from scratch. Prints valid and test
 * mAP50 (the dataset's own splits), the epochs each run managed and the load average around it.
 *
 *   npx tsx bench/fine-tune.ts [baseMinutes=8] [shortMinutes=2] [longMinutes=8] [imgsz=416] [seed=0]
 */
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { startServer, type BenchServer, waitFor } from './lib/server.js';
import { everyOtherByName, importAndVersion } from './lib/training.js';

const baseMinutes = Number(process.argv[2] ?? 8);
const shortMinutes = Number(process.argv[3] ?? 2);
const longMinutes = Number(process.argv[4] ?? 8);
const imgsz = Number(process.argv[5] ?? 416);
const seed = Number(process.argv[6] ?? 0);
const DATASET = 'indian-vehicles-yolo';


interface Outcome {
  run: string;
  images: number;
  budget: string;
  epochs: number;
  valid: number | null;
  test: number | null;
  modelId: number;
  wall: number;
  load: string;
}

async function train(server: BenchServer, label: string, data: { projectId: number; versionId: number; train: number }, minutes: number, extra: Record<string, unknown> = {}): Promise<Outcome> {
  const load = [loadavg()[0]];
  const started = Date.now();
  const job = await server.api('POST', `/api/projects/${data.projectId}/train`, {
    version_id: data.versionId, adapter: 'versa-detect', device: 'cpu', seed, imgsz, batch: 16, epochs: 1000,
    time_budget_s: Math.max(1, Math.round(minutes * 60)), require_ready: false, ...extra,
  });
  const done = await waitFor(() => server.api('GET', `/api/train/jobs/${job.id}`), (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status));
  load.push(loadavg()[0]);
  if (done.status !== 'succeeded') throw new Error(`${label}: training ${done.status}: ${done.error}`);
  const experiment = await server.api('GET', `/api/experiments/${done.experiment_id}`);
  const outcome = {
    run: label,
    images: data.train,
    budget: `${minutes} min`,
    epochs: experiment.epoch,
    valid: experiment.metrics.map50 ?? null,
    test: experiment.metrics.test_map50 ?? null,
    modelId: done.model_id,
    wall: (Date.now() - started) / 1000,
    load: load.map((l) => l.toFixed(1)).join(' → '),
  };
  console.log(outcome, experiment.recipe.initial_weights ?? '');
  return outcome;
}

const server = await startServer({ IMPORT_ROOT: resolve('..', 'shared', 'datasets') });
try {
  const all = await importAndVersion(server.api, DATASET, { name: `${DATASET} all` });
  const half = await importAndVersion(server.api, DATASET, { name: `${DATASET} half`, keepTrain: everyOtherByName });
  const base = await train(server, 'base: half, from scratch', half, baseMinutes);
  const runs = [
    base,
    await train(server, 'all, from the base', all, shortMinutes, { base_model_id: base.modelId }),
    await train(server, 'all, from scratch', all, shortMinutes),
    await train(server, 'all, from scratch (long)', all, longMinutes),
  ];
  const [, tuned, scratch, long] = runs;
  const fmt = (v: number | null) => (v === null ? '–' : v.toFixed(3));
  console.log(`\nFine-tuning through the API: ${DATASET}, versa-detect-s at ${imgsz} px, CPU (${cpus().length} cores), seed ${seed}; load average now ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.table(runs.map((r) => ({
    run: r.run, 'train images': r.images, budget: r.budget, epochs: r.epochs, 'valid mAP50': fmt(r.valid), 'test mAP50': fmt(r.test), 'wall (s)': r.wall.toFixed(0), load: r.load,
  })));
  for (const split of ['valid', 'test'] as const) {
    const gain = (tuned[split] ?? 0) - (scratch[split] ?? 0);
    const ratio = (tuned[split] ?? 0) / Math.max(1e-9, long[split] ?? 0);
    console.log(`${split}: from the base − from scratch (${shortMinutes} min) = ${gain.toFixed(3)} (target ≥ 0.2); from the base ÷ from scratch (${longMinutes} min) = ${ratio.toFixed(2)} (target ≥ 0.9)`);
  }
} finally {
  await server.stop();
}
