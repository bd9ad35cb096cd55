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
import { promisify } from 'node:util';
import { startServer, type BenchServer } from './lib/server.js';
import { DATASETS, importAndVersion, trainWithBudget } from './lib/training.js';

const which = process.argv[2] ?? 'both';
const detectMinutes = Number(process.argv[3] ?? 8);
const classifyMinutes = Number(process.argv[4] ?? 5);
const seed = Number(process.argv[5] ?? 0);

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
    const { projectId, versionId } = await importAndVersion(server.api, run.dataset);
    const { experiment, metrics: m, wall } = await trainWithBudget(server.api, projectId, versionId, run.adapter, run.minutes, run.body, seed);
    load.push(loadavg()[0]);
    const shown = Object.entries(m).filter(([k, v]) => v !== null && /^(test_)?(map50|map50_95|accuracy|top5|precision|recall)$/.test(k));
    rows.push({
      dataset: run.dataset,
      adapter: `${run.adapter} ${experiment.params?.model ?? ''}`.trim(),
      budget: `${run.minutes} min`,
      'wall (s)': wall.toFixed(0),
      epochs: String(experiment.epoch ?? ''),
      [run.headline]: (m[run.headline] ?? NaN).toFixed(3),
      baseline: await run.baseline(server, projectId, versionId),
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
