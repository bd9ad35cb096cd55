/**
 * Train/serve skew (issue 28), through the API on a real set: the shared Indian-vehicles frames were stretched from
 * 16:9 CCTV frames to 640 × 640 by Roboflow; this bench stretches them back to 16:9 "originals" (labels are
 * normalised, so they follow), imports them, trains versa-detect on a version that stretches to a square (as the
 * issue's chess run did), and scores the trained model on the valid and test originals served two ways:
 *   - as trained: the model's ONNX file as registered (it records the version's preprocessing, which inference applies);
 *   - letterboxed: the same weights without that record, so the original is letterboxed (inference before the fix).
 * Reports mAP50 (trainer's metric code) and, at confidence 0.3, boxes right / wrong class / false positives / missed.
 *
 *   npx tsx bench/served-as-trained.ts [minutes=4] [imgsz=320] [seed=0]
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { encodeOnnxMetadata, readOnnxMetadata } from '../src/inference/onnx-metadata.js';
import { PREPROCESSING_METADATA_KEY } from '../src/inference/served-input.js';
import { TRAINER_DIR, pythonPath } from '../src/training/python.js';
import { startServer, type BenchServer, waitFor } from './lib/server.js';

const minutes = Number(process.argv[2] ?? 4);
const imgsz = Number(process.argv[3] ?? 320);
const seed = Number(process.argv[4] ?? 0);
const SOURCE = resolve('..', 'shared', 'datasets', 'indian-vehicles-yolo');
const ORIGINAL = { width: 1138, height: 640 };

type Box = [number, number, number, number];
interface Truth { file: string; data: Buffer; boxes: { cls: number; box: Box }[] }

/** The dataset with every frame stretched back to 16:9; returns the valid and test originals with their boxes. */
async function unstretch(dir: string): Promise<Truth[]> {
  const held: Truth[] = [];
  await mkdir(dir, { recursive: true });
  await copyFile(join(SOURCE, 'data.yaml'), join(dir, 'data.yaml'));
  for (const split of ['train', 'valid', 'test']) {
    await mkdir(join(dir, split, 'images'), { recursive: true });
    await mkdir(join(dir, split, 'labels'), { recursive: true });
    for (const file of await readdir(join(SOURCE, split, 'images'))) {
      const data = await sharp(join(SOURCE, split, 'images', file)).resize(ORIGINAL.width, ORIGINAL.height, { fit: 'fill' }).jpeg({ quality: 92 }).toBuffer();
      await writeFile(join(dir, split, 'images', file), data);
      const label = file.replace(/\.[^.]+$/, '.txt');
      const text = await readFile(join(SOURCE, split, 'labels', label), 'utf8').catch(() => '');
      await writeFile(join(dir, split, 'labels', label), text);
      if (split === 'train') continue;
      const boxes = text.split('\n').filter((l) => l.trim()).map((line) => {
        const [cls, cx, cy, w, h] = line.trim().split(/\s+/).map(Number);
        return { cls, box: [(cx - w / 2) * ORIGINAL.width, (cy - h / 2) * ORIGINAL.height, w * ORIGINAL.width, h * ORIGINAL.height] as Box };
      });
      held.push({ file, data, boxes });
    }
  }
  return held;
}


async function post(server: BenchServer, path: string, form: FormData): Promise<any> {
  const res = await fetch(server.url + path, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: form });
  if (!res.ok) throw new Error(`POST ${path} → ${res.status} ${await res.text()}`);
  return res.json();
}

const iou = (a: Box, b: Box) => {
  const w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
  return w <= 0 || h <= 0 ? 0 : (w * h) / (a[2] * a[3] + b[2] * b[3] - w * h);
};

/** The counts at one confidence: greedy by score, a box is right, of the wrong class, or a false positive. */
function counts(truths: Truth[], predictions: { cls: number; box: Box; score: number }[][], confidence: number) {
  let right = 0, wrongClass = 0, falsePositive = 0, missed = 0;
  for (const [i, truth] of truths.entries()) {
    const used = new Set<number>();
    for (const p of predictions[i].filter((q) => q.score >= confidence).sort((a, b) => b.score - a.score)) {
      let best = -1, bestIou = 0.5, any = false;
      for (const [j, t] of truth.boxes.entries()) {
        const overlap = iou(p.box, t.box);
        if (overlap >= 0.5) any = true;
        if (!used.has(j) && t.cls === p.cls && overlap >= bestIou) [best, bestIou] = [j, overlap];
      }
      if (best >= 0) {
        used.add(best);
        right++;
      } else if (any) wrongClass++;
      else falsePositive++;
    }
    missed += truth.boxes.filter((t, j) => !used.has(j) && !predictions[i].some((p) => p.score >= confidence && iou(p.box, t.box) >= 0.5)).length;
  }
  return { right, wrongClass, falsePositive, missed };
}

const work = await mkdtemp(join(tmpdir(), 'versa-served-'));
const server = await startServer({ IMPORT_ROOT: work, RUNS_ROOT: work });
try {
  const held = await unstretch(join(work, 'vehicles'));
  const project = await server.api('POST', '/api/projects/import/folder', { path: 'vehicles', name: 'vehicles-16x9' });
  const created = await server.api('POST', `/api/projects/${project.id}/versions`, {
    name: 'stretched', seed: 1, preprocessing_config: { resize: { enabled: true, width: imgsz, height: imgsz, mode: 'stretch' } },
  });
  const version = await waitFor(() => server.api('GET', `/api/versions/${created.id}`), (v) => v.status === 'ready' || v.status === 'failed');
  if (version.status !== 'ready') throw new Error(`version ${version.status}`);
  const job = await server.api('POST', `/api/projects/${project.id}/train`, {
    version_id: version.id, adapter: 'versa-detect', device: 'cpu', seed, imgsz, batch: 16, epochs: 1000, time_budget_s: Math.round(minutes * 60), require_ready: false,
  });
  const done = await waitFor(() => server.api('GET', `/api/train/jobs/${job.id}`), (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status));
  if (done.status !== 'succeeded') throw new Error(`training ${done.status}: ${done.error}`);
  const experiment = await server.api('GET', `/api/experiments/${done.experiment_id}`);
  const run = (await server.api('GET', '/api/models/runs')).find((r: any) => r.experiment_id === done.experiment_id);
  const asTrained = await readFile(join(server.dataDir, run.path));
  const record = readOnnxMetadata(asTrained)[PREPROCESSING_METADATA_KEY];
  const tail = encodeOnnxMetadata({ [PREPROCESSING_METADATA_KEY]: record });
  if (!record || !asTrained.subarray(asTrained.length - tail.length).equals(tail)) throw new Error('the trained model does not end with its preprocessing record');
  const letterboxed = asTrained.subarray(0, asTrained.length - tail.length);

  // The held-out originals, unlabelled, in a project of their own (an accepted label would hide the predictions it covers).
  const evaluation = await server.api('POST', '/api/projects', { name: 'held-out originals', project_type: 'object_detection' });
  const names: string[] = experiment.per_class.map((c: any) => c.name);
  for (const name of names) await server.api('POST', `/api/projects/${evaluation.id}/classes`, { name });
  const ids: number[] = [];
  for (const truth of held) {
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(truth.data)], { type: 'image/jpeg' }), truth.file);
    ids.push((await post(server, `/api/projects/${evaluation.id}/images`, form)).images[0].id);
  }
  const rows: Record<string, string | number>[] = [];
  for (const [label, bytes] of [['as trained (recipe applied)', asTrained], ['letterboxed original (before)', letterboxed]] as const) {
    const form = new FormData();
    form.append('name', label);
    form.append('file', new Blob([new Uint8Array(bytes)]), 'model.onnx');
    const model = await post(server, `/api/projects/${evaluation.id}/models/upload`, form);
    const result = await server.api('POST', `/api/projects/${evaluation.id}/auto-annotate/yolo`, { model: model.id, confidence: 0.001, iou: 0.6, image_ids: ids, create_missing_classes: false });
    if (result.job_id) await waitFor(() => server.api('GET', `/api/jobs/${result.job_id}`), (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status));
    const classOf = new Map<number, number>();
    for (const c of await server.api('GET', `/api/projects/${evaluation.id}/classes`)) classOf.set(c.id, names.indexOf(c.name));
    const predictions: { cls: number; box: Box; score: number }[][] = [];
    for (const id of ids) {
      const annotations: any[] = await server.api('GET', `/api/images/${id}/annotations?limit=10000`);
      predictions.push(annotations.filter((a) => a.source === `model:${model.id}`).map((a) => ({
        cls: classOf.get(a.class_id)!, box: [a.geometry.x, a.geometry.y, a.geometry.width, a.geometry.height] as Box, score: a.confidence as number,
      })));
    }
    const spec = join(work, 'eval.json');
    await writeFile(spec, JSON.stringify({
      task: 'detect', class_names: names,
      images: held.map((truth, i) => ({ id: i, gt: truth.boxes.map((b) => [b.cls, ...b.box]), pred: predictions[i].map((p) => [p.cls, ...p.box, p.score]) })),
    }));
    const metrics = JSON.parse((await promisify(execFile)(pythonPath(), ['-m', 'versa_trainer.evaluate', '--input', spec], { cwd: TRAINER_DIR })).stdout);
    const c = counts(held, predictions, 0.3);
    rows.push({ served: label, map50: metrics.map50.toFixed(3), right: c.right, 'wrong class': c.wrongClass, 'false positives': c.falsePositive, missed: c.missed });
  }
  const truths = held.reduce((n, t) => n + t.boxes.length, 0);
  console.log(`\nvehicles stretched back to ${ORIGINAL.width}×${ORIGINAL.height}; version stretches to ${imgsz}×${imgsz}; versa-detect ${minutes} min CPU (${experiment.epoch} epochs, trainer's valid mAP50 ${Number(experiment.metrics.map50).toFixed(3)}, test ${Number(experiment.metrics.test_map50 ?? NaN).toFixed(3)}); ${held.length} held-out originals, ${truths} boxes; counts at confidence 0.3`);
  console.table(rows);
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
