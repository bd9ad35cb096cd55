/**
 * Training benchmark (issue 13), through Versa's HTTP API in process (Fastify inject, SQLite, in-process queue):
 *  1. quality: a generated shapes project → version → versa-detect; valid mAP50 beside a predict-nothing baseline (0);
 *  2. the exported ONNX through auto-annotate on the valid images, scored by the same metric code
 *     (trainer/versa_trainer/evaluate.py), against the trainer's own valid mAP50 (should agree within 0.01);
 *  3. orchestration overhead: the same short training run through Versa (POST → job succeeded) and run directly
 *     (`python3 trainer/versa_detect.py --config` on the same materialised folder), taking turns, median of `reps`:
 *     the time of an epoch (from each run's epoch events, leaving out the first) and of the whole run.
 * Prints a table and the machine load; asserts nothing (timings are noisy on a shared machine).
 *
 *   npx tsx bench/training.ts            60 images at 160 px, 20 epochs; overhead: 6 epochs at 320 px × 5 reps
 *   npx tsx bench/training.ts --smoke    tiny sizes (checks the bench itself works)
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { scoreServedDetector, trainingService } from './lib/training-service.js';
import { generateDataset, SHAPE_CLASSES } from '../src/synthetic/index.js';
import { pythonPath, TRAINER_DIR } from '../src/training/python.js';
import { startTestApp, type Client } from '../test/helpers/test-app.js';
import { createClass, uploadImages } from '../test/helpers/version-fixtures.js';

const run = promisify(execFile);
const smoke = process.argv.includes('--smoke');
const images = smoke ? 20 : 60;
const epochs = smoke ? 3 : 20;
const imgsz = smoke ? 96 : 160;
const overheadEpochs = smoke ? 2 : 6;
const reps = smoke ? 1 : 5;
const overheadImgsz = smoke ? 96 : 320;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function waitJob(client: Client, jobId: number): Promise<any> {
  for (;;) {
    const job = (await client.get(`/api/train/jobs/${jobId}`)).body;
    if (['succeeded', 'failed', 'cancelled'].includes(job.status)) return job;
    await sleep(100);
  }
}

async function main(): Promise<void> {
  const load = [loadavg()[0]];
  const t = await startTestApp();
  try {
    await t.user();
    const owner = await t.user();
    const project = (await owner.post('/api/projects', { name: 'bench-train', project_type: 'object_detection' })).body;
    const classIds = new Map<string, number>();
    for (const c of SHAPE_CLASSES) classIds.set(c.name, await createClass(owner, project.id, c.name));
    const data = await generateDataset('bench-train', images, { width: 192, height: 160, count: [1, 3], masks: false, format: 'jpeg' });
    const uploaded = await uploadImages(owner, project.id, data.map((d) => ({ name: d.filename, data: d.data })));
    for (const [i, image] of data.entries()) {
      for (const s of image.shapes) {
        await owner.post(`/api/images/${uploaded[i].id}/annotations`, { class_id: classIds.get(s.className), annotation_type: 'bbox', geometry: s.bbox });
      }
    }
    const version = (await owner.post(`/api/projects/${project.id}/versions`, { name: 'v1', seed: 3, preprocessing_config: { resize: { enabled: false } } })).body;
    await t.versa.deps.queue.drain();

    // 1. Quality through the API.
    const started = Date.now();
    const posted = await owner.post(`/api/projects/${project.id}/train`, { version_id: version.id, model: 'versa-detect-n', epochs, imgsz, batch: 8, seed: 1, device: 'cpu', require_ready: false });
    if (posted.status !== 202 && posted.status !== 201) throw new Error(`training: ${posted.status} ${JSON.stringify(posted.body)}`);
    const job = posted.body;
    const done = await waitJob(owner, job.id);
    const trainSeconds = (Date.now() - started) / 1000;
    load.push(loadavg()[0]);
    if (done.status !== 'succeeded') throw new Error(`training ${done.status}: ${done.error}`);

    // 2. The ONNX model through auto-annotate on the valid images, scored by the same metric code.
    const { served: onnx, nothing } = await scoreServedDetector(t, owner, project.id, version.id, done.model_id);

    // 3. Overhead: through Versa vs direct on the same materialised folder, taking turns.
    const folder = await mkdtemp(join(tmpdir(), 'versa-bench-data-'));
    const training = await trainingService(t);
    await training.materialise(version.id, folder);
    const viaVersa: number[] = [];
    const direct: number[] = [];
    const epochVersa: number[] = [];
    const epochDirect: number[] = [];
    for (let r = 0; r < reps; r++) {
      let s = Date.now();
      const j = (await owner.post(`/api/projects/${project.id}/train`, { version_id: version.id, model: 'versa-detect-n', epochs: overheadEpochs, imgsz: overheadImgsz, batch: 8, seed: 1, device: 'cpu', require_ready: false })).body;
      const d = await waitJob(owner, j.id);
      if (d.status !== 'succeeded') throw new Error(`overhead run ${d.status}: ${d.error}`);
      viaVersa.push((Date.now() - s) / 1000);
      epochVersa.push(meanEpochSeconds((await owner.get(`/api/experiments/${d.experiment_id}`)).body.history));
      const out = await mkdtemp(join(tmpdir(), 'versa-bench-out-'));
      const config = join(out, 'run.json');
      await writeFile(config, JSON.stringify({ data_dir: folder, out_dir: out, model: 'versa-detect-n', epochs: overheadEpochs, imgsz: overheadImgsz, batch: 8, seed: 1, device: 'cpu', require_ready: false }));
      s = Date.now();
      const stdout = await new Promise<string>((resolve, reject) => {
        const child = spawn(pythonPath(), [join(TRAINER_DIR, 'versa_detect.py'), '--config', config], { stdio: ['ignore', 'pipe', 'ignore'] });
        let text = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`direct run exited ${code}`))));
      });
      direct.push((Date.now() - s) / 1000);
      epochDirect.push(meanEpochSeconds(stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((e) => e.event === 'epoch')));
      await rm(out, { recursive: true, force: true });
    }
    await rm(folder, { recursive: true, force: true });
    load.push(loadavg()[0]);

    const experiment = (await owner.get(`/api/experiments/${done.experiment_id}`)).body;
    console.log(`\nTraining benchmark${smoke ? ' (smoke)' : ''}: ${images} generated shapes images (192×160, 1–3 shapes, 5 classes), versa-detect-n at ${imgsz} px, batch 8, CPU`);
    console.log(`machine: ${(await run('nproc')).stdout.trim()} cores, 1-min load average at start / after quality / at end: ${load.map((l) => l.toFixed(1)).join(' / ')} (shared by other agents: timings are noisy)`);
    console.table([
      { measure: 'valid mAP50 (trainer)', value: experiment.metrics.map50.toFixed(3), baseline: `predict-nothing ${nothing.map50.toFixed(3)}` },
      { measure: 'valid mAP50-95 (trainer)', value: experiment.metrics.map50_95.toFixed(3), baseline: `predict-nothing ${nothing.map50_95.toFixed(3)}` },
      { measure: 'valid mAP50, ONNX via auto-annotate', value: onnx.map50.toFixed(3), baseline: `|Δ| ${Math.abs(onnx.map50 - experiment.metrics.map50).toFixed(4)}` },
      { measure: `training ${epochs} epochs through the API (s)`, value: trainSeconds.toFixed(1), baseline: '' },
      { measure: `${overheadEpochs}-epoch run at ${overheadImgsz} px through Versa (s, median of ${reps})`, value: median(viaVersa).toFixed(1), baseline: viaVersa.map((v) => v.toFixed(1)).join(' ') },
      { measure: `${overheadEpochs}-epoch run at ${overheadImgsz} px direct (s, median of ${reps})`, value: median(direct).toFixed(1), baseline: direct.map((v) => v.toFixed(1)).join(' ') },
      { measure: 'whole run: Versa / direct (materialise, job, register included)', value: (median(viaVersa) / median(direct)).toFixed(3), baseline: '' },
      { measure: 'epoch (s, mean of epochs 2+): Versa / direct', value: `${median(epochVersa).toFixed(3)} / ${median(epochDirect).toFixed(3)}`, baseline: `${epochVersa.map((v) => v.toFixed(2)).join(' ')} / ${epochDirect.map((v) => v.toFixed(2)).join(' ')}` },
      { measure: 'epoch overhead ratio (Versa / direct)', value: (median(epochVersa) / median(epochDirect)).toFixed(3), baseline: 'target ≤ 1.1' },
    ]);
  } finally {
    await t.close();
  }
}

/** Mean duration of an epoch from a run's epoch rows (`time`: seconds since the start), leaving out the first. */
function meanEpochSeconds(rows: { epoch: number; time: number }[]): number {
  const times = rows.map((r) => Number(r.time));
  if (times.length < 2) return times[0] ?? NaN;
  return (times[times.length - 1] - times[0]) / (times.length - 1);
}

await main();
