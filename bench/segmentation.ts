/**
 * Semantic segmentation on the shared mask sets (issue 28), through Versa's HTTP API as a user drives it: the server
 * runs as its own process, the dataset folder is imported (`POST /api/projects/import/folder`, IMPORT_ROOT =
 * ../shared/datasets), a version keeps the dataset's own splits at full size, and `POST /api/projects/{id}/train`
 * trains versa-segment from scratch on the CPU under a time budget. Beside it: predict-nothing (every pixel
 * background) and a bare torchvision script (bench/bare-semantic.py: lraspp_mobilenet_v3_large from scratch) on the
 * same budget, both measured as versa-segment measures (test split letterboxed to imgsz, padding left out).
 * plants-coco-seg (instance polygons) trains versa-segment too and reports test mask mAP50 / mAP50-95 of the
 * connected regions beside predict-nothing (0) and the bare script (the same LR-ASPP on the polygons' class maps, its
 * regions measured the same way).
 *
 *   npx tsx bench/segmentation.ts [minutes=8] [imgsz=256] [seed=0] [only=<dataset>]
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startServer, waitFor } from './lib/server.js';

const minutes = Number(process.argv[2] ?? 8);
const imgsz = Number(process.argv[3] ?? 256);
const seed = Number(process.argv[4] ?? 0);
const DATASETS = resolve('..', 'shared', 'datasets');
const only = process.argv[5];
const SETS = ['plants-semantic-masks', 'indoor-semantic-masks'].filter((d) => !only || d === only);
const run = promisify(execFile);


const server = await startServer({ IMPORT_ROOT: DATASETS });
/**
 * One dataset through the API (import, a full-size version, versa-segment for the budget) and the bare script on the
 * same budget: the experiment's metrics, the bare script's, the run's wall time and the load before, between and after.
 */
async function measure(dataset: string) {
  const load = [loadavg()[0]];
  const project = await server.api('POST', '/api/projects/import/folder', { path: dataset, name: dataset });
  const created = await server.api('POST', `/api/projects/${project.id}/versions`, { name: 'bench', seed: 1, preprocessing_config: { resize: { enabled: false } } });
  const version = await waitFor(() => server.api('GET', `/api/versions/${created.id}`), (v) => v.status === 'ready' || v.status === 'failed');
  if (version.status !== 'ready') throw new Error(`version ${version.status}`);
  const started = Date.now();
  const job = await server.api('POST', `/api/projects/${project.id}/train`, {
    version_id: version.id, adapter: 'versa-segment', device: 'cpu', seed, imgsz, epochs: 1000, time_budget_s: Math.round(minutes * 60), require_ready: false,
  });
  const done = await waitFor(() => server.api('GET', `/api/train/jobs/${job.id}`), (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status));
  const wall = (Date.now() - started) / 1000;
  load.push(loadavg()[0]);
  if (done.status !== 'succeeded') throw new Error(`${dataset}: training ${done.status}: ${done.error}`);
  const experiment = await server.api('GET', `/api/experiments/${done.experiment_id}`);
  const { stdout } = await run('/usr/bin/python3', ['bench/bare-semantic.py', join(DATASETS, dataset), String(Math.round(minutes * 60)), String(imgsz), '8', String(seed)], { maxBuffer: 1 << 24 });
  load.push(loadavg()[0]);
  return {
    m: experiment.metrics as Record<string, number>,
    epochs: String(experiment.epoch ?? ''),
    bare: JSON.parse(stdout.trim().split('\n').pop()!),
    wall,
    load: load.map((l) => l.toFixed(1)).join(' → '),
  };
}

const rows: Record<string, string>[] = [];
try {
  for (const dataset of SETS) {
    const { m, epochs, bare, wall, load } = await measure(dataset);
    rows.push({
      dataset,
      budget: `${minutes} min`,
      'versa wall (s)': wall.toFixed(0),
      epochs,
      'versa test mIoU': m.test_miou.toFixed(3),
      'versa valid mIoU': m.miou.toFixed(3),
      'bare lraspp test mIoU': bare.test_miou.toFixed(3),
      'versa / bare': (m.test_miou / bare.test_miou).toFixed(2),
      'predict-nothing mIoU': bare.nothing_miou.toFixed(3),
      'fg mIoU versa / bare': `${m.test_miou_fg.toFixed(3)} / ${bare.test_miou_fg.toFixed(3)}`,
      load,
    });
    console.log(rows[rows.length - 1]);
  }
  if (!only || only === 'plants-coco-seg') {
    // Instances: versa-segment's class map read as connected regions, one object each (what auto-annotate writes).
    const dataset = 'plants-coco-seg';
    const { m, bare, wall, load } = await measure(dataset);
    rows.push({
      dataset,
      budget: `${minutes} min`,
      'versa wall (s)': wall.toFixed(0),
      'versa test mIoU': `mask mAP50 ${m.test_mask_map50.toFixed(3)} (mAP50-95 ${m.test_mask_map50_95.toFixed(3)}; valid ${m.mask_map50.toFixed(3)})`,
      'bare lraspp test mIoU': `mask mAP50 ${bare.test_mask_map50.toFixed(3)} (mAP50-95 ${bare.test_mask_map50_95.toFixed(3)})`,
      'versa / bare': (m.test_mask_map50 / bare.test_mask_map50).toFixed(2),
      'predict-nothing mIoU': 'mask mAP50 0.000',
      load,
    });
    console.log(rows[rows.length - 1]);
  }
  console.log(`\nSemantic segmentation on the shared datasets through the API, from scratch, CPU (${cpus().length} cores), imgsz ${imgsz}`);
  console.table(rows);
} finally {
  await server.stop();
}
