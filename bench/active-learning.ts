/**
 * Active learning simulated with the ground truth (issue 28), through Versa's HTTP API in process (SQLite,
 * in-process queue, the Python trainer as a child): a shared detection set is imported; its valid and test images
 * keep their boxes (as boxes: polygons become their bounding boxes), its training images lose theirs. Per seed:
 *  1. `seedSet` training images drawn at random get their boxes back; a detector is trained on them (`epochs`) and
 *     promoted to production;
 *  2. for each strategy, `GET /api/projects/{id}/next-to-label?strategy=…&limit=pick` names the images to label;
 *     they get their ground-truth boxes, a version is made and a detector is trained from scratch for the same
 *     budget (same epochs, image size, batch and training seed: seed + picks is the same number of images for
 *     every strategy, so the same number of steps); its valid mAP50 is recorded; the picked boxes are removed again.
 * Prints valid mAP50 per dataset × strategy × seed and the mean over seeds beside random, with the machine load.
 * Asserts nothing.
 *
 *   npx tsx bench/active-learning.ts [--smoke] [--epochs=N] [--imgsz=320] [--seeds=0,1,2] [--pick=50] [--seed-set=20]
 *                                    [--datasets=indian-vehicles-yolo,plants-coco-seg] [--strategies=random,entropy:max,…]
 * A strategy is next-to-label's `strategy`, optionally with `:aggregate` (sum, max, mean; the route's default is sum)
 * and options after `+`: `+classes` (balance=classes), `+spread` (spread=true, the route's default; without it the bench
 * asks for spread=false, so `entropy` is uncertainty alone as in the earlier runs), e.g. `entropy+classes+spread`.
 */
import { loadavg } from 'node:os';
import { startTestApp, type Client } from '../test/helpers/test-app.js';
import { waitFor } from './lib/server.js';
import { boxOf, DATASETS } from './lib/training.js';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const smoke = process.argv.includes('--smoke');
const epochs = Number(arg('epochs', smoke ? '2' : '30'));
const imgsz = Number(arg('imgsz', smoke ? '160' : '320'));
const seeds = arg('seeds', smoke ? '0' : '0,1,2').split(',').map(Number);
const pick = Number(arg('pick', smoke ? '10' : '50'));
const seedSetSize = Number(arg('seed-set', smoke ? '10' : '20'));
// toy-cars-yolo-seg saturates (0.997 valid mAP50 on its 7 valid images from 70 random ones) and car-damage-coco-seg
// learns nothing from 70 images at this budget (0.003–0.015); plants-coco-seg's polygons as boxes have room (0.41–0.55).
const datasets = arg('datasets', 'indian-vehicles-yolo,plants-coco-seg').split(',');
const strategies = arg('strategies', 'random,entropy,entropy+spread,least_confidence+spread').split(',');

interface Box { class_id: number; geometry: { x: number; y: number; width: number; height: number } }


function ok<T = any>(res: { status: number; body: any }, what: string): T {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body as T;
}

/** Seeded shuffle (mulberry32). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let s = seed + 0x6d2b79f5;
  const random = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

async function annotations(client: Client, imageId: number): Promise<any[]> {
  return ok(await client.get(`/api/images/${imageId}/annotations?limit=10000`), 'annotations');
}

async function label(client: Client, truth: Map<number, Box[]>, imageIds: number[]): Promise<void> {
  for (const id of imageIds) {
    for (const box of truth.get(id) ?? []) ok(await client.post(`/api/images/${id}/annotations`, { ...box, annotation_type: 'bbox' }), 'label');
  }
}

async function unlabel(client: Client, imageIds: number[]): Promise<void> {
  for (const id of imageIds) for (const a of await annotations(client, id)) ok(await client.delete(`/api/annotations/${a.id}`), 'unlabel');
}

async function train(client: Client, projectId: number, seed: number, name: string): Promise<{ map50: number; modelId: number; seconds: number }> {
  const created = ok(await client.post(`/api/projects/${projectId}/versions`, {
    name, seed, preprocessing_config: { resize: { enabled: false }, filter_unannotated: true },
  }), 'version');
  const version = await waitFor(async () => ok(await client.get(`/api/projects/${projectId}/versions/${created.id}`), 'version'), (v) => v.status === 'ready' || v.status === 'failed', 500);
  if (version.status !== 'ready') throw new Error(`version ${name} ${version.status}`);
  const started = Date.now();
  const job = ok(await client.post(`/api/projects/${projectId}/train`, {
    version_id: version.id, adapter: 'versa-detect', model: 'versa-detect-n', epochs, imgsz, batch: 8, seed, device: 'cpu', require_ready: false, name,
  }), 'train');
  const done = await waitFor(async () => ok(await client.get(`/api/train/jobs/${job.id}`), 'job'), (j) => ['succeeded', 'failed', 'cancelled'].includes(j.status), 500);
  if (done.status !== 'succeeded') throw new Error(`training ${name} ${done.status}: ${done.error}`);
  const experiment = ok(await client.get(`/api/experiments/${done.experiment_id}`), 'experiment');
  return { map50: Number(experiment.metrics.map50), modelId: done.model_id, seconds: (Date.now() - started) / 1000 };
}

const t = await startTestApp({ IMPORT_ROOT: DATASETS });
const loads = [loadavg()[0]];
const results: { dataset: string; seed: number; strategy: string; map50: number; seconds: number; boxes: number }[] = [];
try {
  await t.user();
  const owner = await t.user();
  for (const dataset of datasets) {
    const project = ok(await owner.post('/api/projects/import/folder', { path: dataset, name: dataset }), 'import');
    const images: any[] = [];
    for (let after = 0; ;) {
      const page = ok<any[]>(await owner.get(`/api/projects/${project.id}/images?limit=1000&after=${after}`), 'images');
      images.push(...page);
      if (page.length < 1000) break;
      after = page[page.length - 1].id;
    }
    // Ground truth as boxes; every image starts unlabelled, then valid and test get theirs back.
    const truth = new Map<number, Box[]>();
    for (const image of images) {
      const found = await annotations(owner, image.id);
      truth.set(image.id, found.flatMap((a) => (boxOf(a) ? [{ class_id: a.class_id, geometry: boxOf(a)! }] : [])));
    }
    await unlabel(owner, images.map((i) => i.id));
    const held = images.filter((i) => i.split === 'valid' || i.split === 'test').map((i) => i.id);
    await label(owner, truth, held);
    const train_ = images.filter((i) => i.split === 'train').map((i) => i.id);
    console.log(`${dataset}: ${train_.length} training images (pool), ${held.length} valid/test images labelled`);

    for (const seed of seeds) {
      const seedSet = shuffled(train_, seed).slice(0, seedSetSize);
      await label(owner, truth, seedSet);
      const base = await train(owner, project.id, seed, `${dataset} seed ${seed} base`);
      ok(await owner.patch(`/api/models/${base.modelId}/lifecycle`, { lifecycle: 'production' }), 'promote');
      results.push({ dataset, seed, strategy: `seed set (${seedSetSize})`, map50: base.map50, seconds: base.seconds, boxes: seedSet.reduce((n, id) => n + truth.get(id)!.length, 0) });
      console.log(results[results.length - 1]);
      for (const strategy of strategies) {
        const [measure, ...options] = strategy.split('+');
        const [name, aggregate] = measure.split(':');
        const query = `strategy=${name}${aggregate ? `&aggregate=${aggregate}` : ''}&spread=${options.includes('spread')}${options.filter((o) => o !== 'spread').map((o) => `&balance=${o}`).join('')}&limit=${pick}&seed=${seed}`;
        const ranked = ok(await owner.get(`/api/projects/${project.id}/next-to-label?${query}`), `next-to-label ${strategy}`);
        const picked: number[] = ranked.items.map((i: any) => i.image.id);
        await label(owner, truth, picked);
        const run = await train(owner, project.id, seed, `${dataset} seed ${seed} ${strategy}`);
        results.push({ dataset, seed, strategy, map50: run.map50, seconds: run.seconds, boxes: picked.reduce((n, id) => n + truth.get(id)!.length, 0) });
        console.log(results[results.length - 1]);
        await unlabel(owner, picked);
      }
      await unlabel(owner, seedSet);
      loads.push(loadavg()[0]);
    }
  }
} finally {
  await t.close();
}

console.log(`\nActive learning, simulated: seed set ${seedSetSize} + ${pick} picked, versa-detect-n ${epochs} epochs at ${imgsz} px, CPU; load ${loads.map((l) => l.toFixed(1)).join(' → ')}`);
console.table(results.map((r) => ({ ...r, map50: r.map50.toFixed(3), seconds: r.seconds.toFixed(0) })));
const summary: Record<string, string>[] = [];
for (const dataset of datasets) {
  const mean = (strategy: string) => {
    const values = results.filter((r) => r.dataset === dataset && r.strategy === strategy).map((r) => r.map50);
    return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  };
  for (const strategy of strategies) {
    const boxes = results.filter((r) => r.dataset === dataset && r.strategy === strategy).map((r) => r.boxes);
    summary.push({ dataset, strategy, 'mean valid mAP50': mean(strategy).toFixed(3), 'vs random': (mean(strategy) - mean('random')).toFixed(3), 'boxes labelled (mean)': (boxes.reduce((a, b) => a + b, 0) / Math.max(1, boxes.length)).toFixed(0) });
  }
}
console.table(summary);
