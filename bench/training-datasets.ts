/**
 * Training quality on the shared real datasets (issue 13), through Versa's HTTP API as a user drives it: the server
 * runs as its own process, the dataset folder is imported (`POST /api/projects/import/folder`, IMPORT_ROOT =
 * ../shared/datasets), a version keeps the dataset's own splits at full size, and `POST /api/projects/{id}/train`
 * trains from scratch on the CPU under a time budget. Reports the test metrics the experiment recorded beside a
 * baseline: predict-nothing (mAP 0) for the detector, the majority class of the training split for the classifier.
 *
 *   npx tsx bench/training-datasets.ts [detect|classify|both] [detectMinutes=8] [classifyMinutes=5] [seed=0]
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { startServer, type BenchServer, waitFor } from './lib/server.js';

const which = process.argv[2] ?? 'both';
const detectMinutes = Number(process.argv[3] ?? 8);
const classifyMinutes = Number(process.argv[4] ?? 5);
const seed = Number(process.argv[5] ?? 0);
const DATASETS = resolve('..', 'shared', 'datasets');

interface Run {
  dataset: string;
  adapter: string;
  body: Record<string, unknown>;
  minutes: number;
  headline: string;
  baseline: (server: BenchServer, projectId: number, versionId: number) => Promise<string>;
}


/** Majority-class accuracy on the test split, the class taken from the version's training split. */
async function majorityBaseline(server: BenchServer, projectId: number, versionId: number): Promise<string> {
  const counts = { train: new Map<string, number>(), test: new Map<string, number>() };
  for (const split of ['train', 'test'] as const) {
    for (let offset = 0; ; offset += 500) {
      const page = await server.api('GET', `/api/projects/${projectId}/versions/${versionId}/images?split=${split}&limit=500&offset=${offset}`);
      const items: any[] = Array.isArray(page) ? page : page.items;
      for (const image of items) {
        for (const a of image.annotations ?? []) counts[split].set(String(a.class_id ?? a.class_name), (counts[split].get(String(a.class_id ?? a.class_name)) ?? 0) + 1);
      }
      if (items.length < 500) break;
    }
  }
  const majority = [...counts.train].sort((a, b) => b[1] - a[1])[0]?.[0];
  const testTotal = [...counts.test.values()].reduce((s, n) => s + n, 0);
  return `majority class ${((counts.test.get(majority!) ?? 0) / Math.max(1, testTotal)).toFixed(3)}`;
}

const RUNS: Run[] = [
  {
    dataset: 'indian-vehicles-yolo',
    adapter: 'versa-detect',
    body: { imgsz: 416, batch: 16, epochs: 1000 },
    minutes: detectMinutes,
    headline: 'test_map50',
    baseline: async () => 'predict-nothing 0.000',
  },
  {
    dataset: 'fresh-rotten-cls',
    adapter: 'versa-classify',
    body: { imgsz: 128, batch: 32, epochs: 1000 },
    minutes: classifyMinutes,
    headline: 'test_accuracy',
    baseline: majorityBaseline,
  },
].filter((r) => which === 'both' || (which === 'detect') === (r.adapter === 'versa-detect'));

const server = await startServer({ IMPORT_ROOT: DATASETS });
const rows: Record<string, string>[] = [];
try {
  for (const run of RUNS) {
    const load = [loadavg()[0]];
    const project = await server.api('POST', '/api/projects/import/folder', { path: run.dataset, name: run.dataset });
    const created = await server.api('POST', `/api/projects/${project.id}/versions`, { name: 'bench', seed: 1, preprocessing_config: { resize: { enabled: false } } });
    const version = await waitFor(() => server.api('GET', `/api/versions/${created.id}`), (v) => v.status === 'ready' || v.status === 'failed');
    if (version.status !== 'ready') throw new Error(`version ${version.status}`);
    const started = Date.now();
    const job = await server.api('POST', `/api/projects/${project.id}/train`, {
      version_id: version.id, adapter: run.adapter, device: 'cpu', seed, time_budget_s: Math.round(run.minutes * 60), ...run.body,
    });
    const done = await waitFor(() => server.api('GET', `/api/train/jobs/${job.id}`), (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status));
    const wall = (Date.now() - started) / 1000;
    load.push(loadavg()[0]);
    if (done.status !== 'succeeded') throw new Error(`${run.dataset}: training ${done.status}: ${done.error}`);
    const experiment = await server.api('GET', `/api/experiments/${done.experiment_id}`);
    const m = experiment.metrics as Record<string, number | null>;
    const shown = Object.entries(m).filter(([k, v]) => v !== null && /^(test_)?(map50|map50_95|accuracy|top5|precision|recall)$/.test(k));
    rows.push({
      dataset: run.dataset,
      adapter: `${run.adapter} ${experiment.params?.model ?? ''}`.trim(),
      budget: `${run.minutes} min`,
      'wall (s)': wall.toFixed(0),
      epochs: String(experiment.epoch ?? ''),
      [run.headline]: (m[run.headline] ?? NaN).toFixed(3),
      baseline: await run.baseline(server, project.id, version.id),
      metrics: shown.map(([k, v]) => `${k} ${Number(v).toFixed(3)}`).join(', '),
      load: load.map((l) => l.toFixed(1)).join(' → '),
    });
    console.log(rows[rows.length - 1]);
  }
  const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', 'import torch; print(torch.__version__, torch.get_num_threads())']).catch(() => ({ stdout: '?' }));
  console.log(`\nTraining on the shared datasets through the API, from scratch, CPU (${cpus().length} cores; torch ${stdout.trim()} threads)`);
  console.table(rows);
} finally {
  await server.stop();
}
