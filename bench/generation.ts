/**
 * Version generation throughput against a bare sharp pipeline doing the same work on the same images.
 *   Versa: a version generated through the real module (HTTP create → snapshot → job → executor → blob store →
 *          batched rows, SQLite), timed from the POST until the version is ready.
 *   Bare:  for the same planned outputs, one sharp pipeline per output (decode, resize, the augmentation affine
 *          with the flip folded in, brightness as one linear op, JPEG q90), reading and writing files the same way.
 * Both run two images at a time (both cores busy). Recipe: resize to 720×480 (stretch); augmentation on every
 * image: horizontal flip, rotation ±10°, brightness ±15 %. Target: Versa ≥ 0.85× bare.
 * Usage: npx tsx bench/generation.ts [images=40] [width=3000] [height=2000] [rounds=2]
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { planOutputs, resolveAugmentation, resolvePreprocessing, type Recipe, type StepOf } from '../src/imaging/recipe/index.js';
import { datasetImage } from '../src/synthetic/index.js';

const imageCount = Number(process.argv[2] ?? 40);
const width = Number(process.argv[3] ?? 3000);
const height = Number(process.argv[4] ?? 2000);
const rounds = Number(process.argv[5] ?? 2);
const CONCURRENCY = 2;
const SEED = 7;
const preprocessing_config = { resize: { width: 720, height: 480, mode: 'stretch' as const } };
const augmentation_config = { outputs_per_image: 1, apply_to: 'all' as const, flip_horizontal: true, rotation: 10, brightness: 15 };
const recipe: Recipe = { preprocessing: resolvePreprocessing(preprocessing_config), augmentation: resolveAugmentation(augmentation_config) };

const dir = await mkdtemp(join(tmpdir(), 'versa-bench-generation-'));
try {
  console.log(`generating ${imageCount} synthetic ${width}×${height} JPEGs…`);
  const sources: { id: number; path: string; data: Buffer }[] = [];
  await mkdir(join(dir, 'sources'));
  for (let i = 0; i < imageCount; i++) {
    const image = await datasetImage('bench-generation', i, { width, height, format: 'jpeg', masks: false });
    const path = join(dir, 'sources', `${i}.jpg`);
    await writeFile(path, image.data);
    sources.push({ id: i, path, data: image.data });
  }

  const versa = await startVersa(sources);
  const bareTimes: number[] = [];
  const versaTimes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which runs first so neither always gets the warm caches.
    const order = round % 2 === 0 ? ['versa', 'bare'] : ['bare', 'versa'];
    for (const which of order) {
      if (which === 'versa') versaTimes.push(await versa.generate());
      else bareTimes.push(await bare(sources.map((s, i) => ({ ...s, imageId: versa.imageIds[i] })), join(dir, `bare-${round}`)));
    }
  }
  await versa.close();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const versaRate = imageCount / (median(versaTimes) / 1000);
  const bareRate = imageCount / (median(bareTimes) / 1000);
  console.log(`bare sharp: ${bareRate.toFixed(2)} images/s (median of ${bareTimes.map((t) => t.toFixed(0)).join(', ')} ms)`);
  console.log(`versa:      ${versaRate.toFixed(2)} images/s (median of ${versaTimes.map((t) => t.toFixed(0)).join(', ')} ms)`);
  console.log(`ratio: ${(versaRate / bareRate).toFixed(3)} (target ≥ 0.85)`);
} finally {
  await rm(dir, { recursive: true, force: true });
}

/** An app on a fresh SQLite database with the sources as project images. */
async function startVersa(files: { path: string; data: Buffer }[]) {
  const dataDir = join(dir, 'versa');
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'silent', AUTH_ATTEMPTS_PER_MINUTE: '100000' });
  const { app, deps } = await buildApp(config, { logger: false });
  await app.ready();
  const inject = async (method: 'GET' | 'POST', url: string, payload?: object, token?: string) => {
    const res = await app.inject({ method, url, payload, headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  await inject('POST', '/api/auth/register', { email: 'bench@example.com', password: 'bench password' });
  const { token } = await inject('POST', '/api/auth/login', { email: 'bench@example.com', password: 'bench password' });
  const project = await inject('POST', '/api/projects', { name: 'bench', project_type: 'object_detection' }, token);
  const imageIds: number[] = [];
  for (const [i, file] of files.entries()) {
    const key = `projects/${project.id}/images/bench-${i}.jpg`;
    await deps.blobs.put(key, file.data);
    const row = await deps.db
      .insertInto('images')
      .values({
        project_id: project.id, filename: `bench-${i}.jpg`, original_name: `bench-${i}.jpg`, width, height, split: 'train',
        sha256: `bench-${i}`, mime_type: 'image/jpeg', size_bytes: file.data.length, blob_key: key, thumbnail_key: `${key}.webp`,
        created_at: new Date().toISOString(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    imageIds.push(row.id);
  }
  return {
    imageIds,
    async generate(): Promise<number> {
      const started = performance.now();
      const version = await inject('POST', `/api/projects/${project.id}/versions`, { name: 'bench', seed: SEED, preprocessing_config, augmentation_config }, token);
      await deps.queue.drain();
      const done = await inject('GET', `/api/versions/${version.id}`, undefined, token);
      if (done.status !== 'ready' || done.image_counts.total !== files.length) throw new Error(`version ${done.status}: ${done.error}`);
      return performance.now() - started;
    },
    close: () => app.close(),
  };
}

/** The same outputs by plain sharp: one pipeline each, parameters taken from the same plans. */
async function bare(files: { path: string; imageId: number }[], out: string): Promise<number> {
  await mkdir(out, { recursive: true });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++];
      const plan = planOutputs({ recipe, seed: SEED, source: { id: file.imageId, width, height }, outputIndex: 0, split: 'train' });
      const steps = plan.outputs[0].steps;
      const flip = steps.some((s) => s.op === 'flip') ? -1 : 1;
      const degrees = steps.find((s): s is StepOf<'rotate'> => s.op === 'rotate')?.degrees ?? 0;
      const percent = steps.find((s): s is StepOf<'brightness'> => s.op === 'brightness')?.percent ?? 0;
      const r = (degrees * Math.PI) / 180;
      const matrix: [number, number, number, number] = [Math.cos(r) * flip, -Math.sin(r), Math.sin(r) * flip, Math.cos(r)];
      const data = await sharp(await readFile(file.path))
        .resize(720, 480, { fit: 'fill' })
        .affine(matrix, { background: '#000000', interpolator: sharp.interpolators.bilinear })
        .linear(1, (percent / 100) * 255)
        .jpeg({ quality: 90 })
        .toBuffer();
      await writeFile(join(out, `${file.imageId}.jpg`), data);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return performance.now() - started;
}
