import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createClass, uploadImages } from '../helpers/version-fixtures.js';

/**
 * Training through the HTTP API for real: a project of generated shapes (exact boxes) → version → versa-detect on
 * the CPU → experiment and registered model → auto-annotate new images with it. Small images, a few epochs.
 */
describe('training and experiments', { timeout: 15 * 60_000 }, () => {
  let t: TestApp;
  let runsRoot: string;
  let owner: Client & { id: number };
  let stranger: Client;
  let projectId: number;
  let versionId: number;
  let classIds: Map<string, number>;

  const waitJob = async (client: Client, jobId: number, until: (job: any) => boolean, timeoutMs = 12 * 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await client.get(`/api/train/jobs/${jobId}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      if (until(res.body)) return res.body;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status}`);
      await sleep(250);
    }
  };

  const shapesProject = async (name: string, count: number, seed: string) => {
    const project = await owner.post('/api/projects', { name, project_type: 'object_detection' });
    const ids = new Map<string, number>();
    for (const c of SHAPE_CLASSES) ids.set(c.name, await createClass(owner, project.body.id, c.name));
    const images = await generateDataset(seed, count, { width: 192, height: 160, count: [1, 3], masks: false, format: 'jpeg' });
    const uploaded = await uploadImages(owner, project.body.id, images.map((i) => ({ name: i.filename, data: i.data })));
    return { id: project.body.id as number, ids, images, uploaded };
  };

  before(async () => {
    runsRoot = await mkdtemp(join(tmpdir(), 'versa-runs-'));
    t = await startTestApp({ RUNS_ROOT: runsRoot });
    await t.user(); // instance admin
    owner = await t.user();
    stranger = await t.user();
    const project = await shapesProject('shapes', 40, 'train-http');
    projectId = project.id;
    classIds = project.ids;
    for (const [i, image] of project.images.entries()) {
      for (const shape of image.shapes) {
        const res = await owner.post(`/api/images/${project.uploaded[i].id}/annotations`, {
          class_id: classIds.get(shape.className), annotation_type: 'bbox', geometry: shape.bbox,
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    }
    const version = await owner.post(`/api/projects/${projectId}/versions`, { name: 'v1', seed: 7, preprocessing_config: { resize: { enabled: false } } });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    versionId = version.body.id;
    await t.versa.deps.queue.drain();
    assert.equal((await owner.get(`/api/projects/${projectId}/versions/${versionId}`)).body.status, 'ready');
  });
  after(async () => {
    await t.close();
    await rm(runsRoot, { recursive: true, force: true });
  });

  it('lists the adapters with their availability and parameters', async () => {
    assert.equal((await t.client().get('/api/training/adapters')).status, 401);
    const res = await owner.get('/api/training/adapters');
    assert.equal(res.status, 200);
    const byName = new Map(res.body.map((a: any) => [a.name, a]));
    assert.deepEqual([...byName.keys()].sort(), ['tabular', 'ultralytics', 'versa-classify', 'versa-detect', 'versa-segment']);
    assert.equal((byName.get('versa-detect') as any).available, true, (byName.get('versa-detect') as any).reason);
    assert.equal((byName.get('tabular') as any).available, true);
    assert.deepEqual((byName.get('versa-detect') as any).params.epochs, { type: 'integer', default: 30, min: 1, max: 1000, description: 'Passes over the training split' });
    const ultralytics = byName.get('ultralytics') as any;
    if (!ultralytics.available) assert.match(ultralytics.reason, /pip install ultralytics/);
  });

  it('refuses bad requests before anything starts: 401, 404, 422, and 409 from the readiness gate', async () => {
    const url = `/api/projects/${projectId}/train`;
    const body = { version_id: versionId, model: 'versa-detect-n', epochs: 1, imgsz: 64, batch: 4 };
    assert.equal((await t.client().post(url, body)).status, 401);
    assert.equal((await stranger.post(url, body)).status, 404);
    assert.equal((await owner.post('/api/projects/999999/train', body)).status, 404);
    assert.equal((await owner.post(url, { ...body, version_id: 999999 })).status, 404);
    for (const bad of [{ ...body, epochs: 0 }, { ...body, imgsz: 100 }, { ...body, batch: 1000 }, { ...body, device: 'tpu' }, { epochs: 1 }]) {
      const res = await owner.post(url, bad);
      assert.equal(res.status, 422, JSON.stringify(bad));
      assert.ok(Array.isArray(res.body.detail));
    }
    const unknownModel = await owner.post(url, { ...body, model: 'resnet9000' });
    assert.equal(unknownModel.status, 422);
    assert.deepEqual(unknownModel.body.detail[0].loc, ['body', 'model']);
    assert.equal((await owner.post(url, { ...body, adapter: 'nope' })).status, 422);
    assert.equal((await owner.post(url, { ...body, adapter: 'versa-classify' })).status, 422, 'classifier on a detection project');
    assert.equal((await owner.post(url, { ...body, adapter: 'tabular' })).status, 422);

    // A project with images but no boxes: the gate answers 409 with the readiness report.
    const empty = await shapesProject('no-boxes', 3, 'gate');
    const emptyVersion = await owner.post(`/api/projects/${empty.id}/versions`, { name: 'v', preprocessing_config: { resize: { enabled: false } } });
    await t.versa.deps.queue.drain();
    const gated = await owner.post(`/api/projects/${empty.id}/train`, { version_id: emptyVersion.body.id });
    assert.equal(gated.status, 409, JSON.stringify(gated.body));
    assert.equal(gated.body.readiness.ready, false);
    assert.ok(gated.body.readiness.score < gated.body.readiness.threshold);
    assert.ok(gated.body.readiness.blockers.some((b: string) => /box/.test(b)));
    assert.ok(gated.body.readiness.checks.some((c: any) => c.id === 'has_boxes' && c.passed === false));
    const experiments = await owner.get(`/api/projects/${empty.id}/experiments`);
    assert.deepEqual(experiments.body, [], 'nothing was recorded');
    assert.deepEqual((await owner.get(`/api/projects/${empty.id}/train/status`)).body, { status: 'idle', job: null });
  });

  it('trains a detector, records the experiment, registers the model and auto-annotates with it', async () => {
    const started = await owner.post(`/api/projects/${projectId}/train`, {
      version_id: versionId, model: 'versa-detect-n', epochs: 14, imgsz: 128, batch: 4, seed: 1, device: 'cpu', name: 'shapes-n',
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.kind, 'train');
    assert.equal(started.body.adapter, 'versa-detect');
    assert.equal(started.body.version_id, versionId);
    const status = await owner.get(`/api/projects/${projectId}/train/status`);
    assert.equal(status.body.status, 'active');
    assert.equal(status.body.job.experiment_id, started.body.experiment_id);

    const done = await waitJob(owner, started.body.id, (job) => ['succeeded', 'failed', 'cancelled'].includes(job.status));
    assert.equal(done.status, 'succeeded', done.error);
    assert.equal(done.epoch, 14);
    assert.ok(done.model_id);
    assert.ok(done.metrics.map50 > 0.5, `valid mAP50 ${done.metrics.map50}`);
    assert.equal((await owner.get(`/api/projects/${projectId}/train/status`)).body.status, 'latest');
    assert.equal((await owner.get(`/api/jobs/${started.body.id}`)).body.status, 'succeeded');

    const experiment = await owner.get(`/api/experiments/${started.body.experiment_id}`);
    assert.equal(experiment.status, 200);
    const e = experiment.body;
    assert.equal(e.status, 'succeeded');
    assert.match(e.name, /^shapes-n/);
    assert.equal(e.history.length, 14);
    assert.ok(e.history[13].train_loss < e.history[0].train_loss * 0.5, `loss ${e.history[0].train_loss} → ${e.history[13].train_loss}`);
    assert.deepEqual(Object.keys(e.params).sort(), ['batch', 'device', 'epochs', 'imgsz', 'lr', 'min_readiness_score', 'model', 'require_ready', 'seed', 'time_budget_s']);
    assert.equal(e.params.epochs, 14);
    assert.equal(e.environment.device, 'cpu');
    assert.match(e.environment.torch, /^\d/);
    assert.equal(e.per_class.length, SHAPE_CLASSES.length);
    assert.deepEqual(e.per_class.map((c: any) => c.name), SHAPE_CLASSES.map((c) => c.name));
    for (const key of ['map50', 'map50_95', 'precision', 'recall', 'train_loss', 'val_loss']) assert.equal(typeof e.metrics[key], 'number', key);
    assert.equal(e.recipe.version_number, 1);

    const models = await owner.get(`/api/projects/${projectId}/models`);
    const model = models.body.find((m: any) => m.id === done.model_id);
    assert.equal(model.experiment_id, e.id);
    assert.equal(model.version_id, versionId);
    assert.equal(model.lifecycle, 'development');
    assert.equal(model.source, 'training_run');
    assert.equal(model.task, 'detect');
    assert.deepEqual(model.class_names, SHAPE_CLASSES.map((c) => c.name));
    assert.equal(model.input_size.width, 128);
    assert.ok(Math.abs(model.metrics.map50 - e.metrics.map50) < 1e-9);

    // Run discovery lists Versa's own run beside RUNS_ROOT's folders.
    const runs = await owner.get('/api/models/runs');
    assert.equal(runs.status, 200);
    const own = runs.body.find((r: any) => r.source === 'versa' && r.experiment_id === e.id);
    assert.ok(own, JSON.stringify(runs.body));
    assert.equal(own.model_id, model.id);
    assert.equal((await stranger.get('/api/models/runs')).body.filter((r: any) => r.source === 'versa').length, 0);

    // Close the loop: the trained ONNX model annotates new images through the existing inference code.
    const fresh = await generateDataset('train-http-new', 3, { width: 192, height: 160, count: [1, 3], masks: false, format: 'jpeg' });
    const uploaded = await uploadImages(owner, projectId, fresh.map((i) => ({ name: `new-${i.filename}`, data: i.data })));
    const annotated = await owner.post(`/api/projects/${projectId}/auto-annotate/yolo`, {
      model: model.id, confidence: 0.3, iou: 0.5, image_ids: uploaded.map((u: any) => u.id), create_missing_classes: false,
    });
    assert.equal(annotated.status, 200, JSON.stringify(annotated.body));
    assert.ok(annotated.body.created >= 1, JSON.stringify(annotated.body));
    const expected = fresh.reduce((n, i) => n + i.shapes.length, 0);
    let hits = 0;
    for (const [i, image] of annotated.body.images.entries()) {
      const truth = fresh[uploaded.findIndex((u: any) => u.id === image.image_id)].shapes;
      for (const a of image.annotations) {
        assert.equal(a.source, `model:${model.id}`);
        if (truth.some((s) => classIds.get(s.className) === a.class_id && iou(s.bbox, a.geometry) > 0.5)) hits++;
      }
      void i;
    }
    assert.ok(hits >= Math.ceil(expected / 2), `${hits} of ${expected} shapes found`);

    // Experiments: list, patch, compare, and their 401/404/422.
    const list = await owner.get(`/api/projects/${projectId}/experiments?status=succeeded`);
    assert.equal(list.status, 200);
    assert.ok(list.body.some((x: any) => x.id === e.id));
    assert.equal((await t.client().get(`/api/projects/${projectId}/experiments`)).status, 401);
    assert.equal((await stranger.get(`/api/projects/${projectId}/experiments`)).status, 404);
    assert.equal((await owner.get(`/api/projects/${projectId}/experiments?limit=0`)).status, 422);
    const patched = await owner.patch(`/api/experiments/${e.id}`, { name: 'baseline', tags: ['small', 'cpu'], notes: 'first run' });
    assert.equal(patched.status, 200);
    assert.deepEqual([patched.body.name, patched.body.tags, patched.body.notes], ['baseline', ['small', 'cpu'], 'first run']);
    assert.equal((await owner.get(`/api/projects/${projectId}/experiments?tag=small`)).body.length, 1);
    assert.equal((await owner.patch(`/api/experiments/${e.id}`, { tags: [''] })).status, 422);
    assert.equal((await owner.patch(`/api/experiments/${e.id}`, {})).status, 422);
    assert.equal((await stranger.patch(`/api/experiments/${e.id}`, { name: 'mine' })).status, 404);
    assert.equal((await t.client().patch(`/api/experiments/${e.id}`, { name: 'x' })).status, 401);
    assert.equal((await stranger.get(`/api/experiments/${e.id}`)).status, 404);
    assert.equal((await owner.get('/api/experiments/999999')).status, 404);
    assert.equal((await owner.get('/api/experiments/abc')).status, 422);
    const compared = await owner.post('/api/experiments/compare', { ids: [e.id, e.id] });
    assert.equal(compared.status, 200);
    assert.equal(compared.body.experiments.length, 2);
    assert.deepEqual(compared.body.params.epochs, [14, 14]);
    assert.equal(compared.body.metrics.map50.length, 2);
    assert.equal((await owner.post('/api/experiments/compare', { ids: [] })).status, 422);
    assert.equal((await stranger.post('/api/experiments/compare', { ids: [e.id] })).status, 404);
    assert.equal((await t.client().post('/api/experiments/compare', { ids: [e.id] })).status, 401);
    assert.equal((await stranger.get(`/api/train/jobs/${started.body.id}`)).status, 404);
    assert.equal((await t.client().get(`/api/train/jobs/${started.body.id}`)).status, 401);
    assert.equal((await owner.get('/api/train/jobs/0')).status, 422);
    assert.equal((await stranger.get(`/api/projects/${projectId}/train/status`)).status, 404);
    assert.equal((await t.client().get(`/api/projects/${projectId}/train/status`)).status, 401);

    // Promotion keeps one production model per project.
    const promoted = await owner.patch(`/api/models/${model.id}/lifecycle`, { lifecycle: 'production' });
    assert.equal(promoted.status, 200);
    assert.equal(promoted.body.lifecycle, 'production');
  });

  it('cancels a running training: the child is stopped, the job and experiment are cancelled, nothing is left', async () => {
    const started = await owner.post(`/api/projects/${projectId}/train`, { version_id: versionId, model: 'versa-detect-n', epochs: 500, imgsz: 128, batch: 4 });
    assert.equal(started.status, 202);
    await waitJob(owner, started.body.id, (job) => job.status === 'running' && job.epoch >= 1);
    const experiment = (await owner.get(`/api/experiments/${started.body.experiment_id}`)).body;
    const runDir = join(t.dataDir, 'runs', 'versa-detect', `exp-${experiment.id}`);
    assert.ok(existsSync(runDir));
    assert.equal((await t.client().post(`/api/jobs/${started.body.id}/cancel`)).status, 401);
    assert.equal((await stranger.post(`/api/jobs/${started.body.id}/cancel`)).status, 404);
    const cancelled = await owner.post(`/api/jobs/${started.body.id}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.status, 'cancelled');
    await t.versa.deps.queue.drain();
    const after = (await owner.get(`/api/experiments/${experiment.id}`)).body;
    assert.equal(after.status, 'cancelled');
    assert.equal(after.model_id, null);
    assert.equal(existsSync(runDir), false, 'partial output removed');
    assert.equal(existsSync(join(t.dataDir, 'training', 'data', `exp-${experiment.id}`)), false);
    assert.equal((await owner.post(`/api/jobs/${started.body.id}/cancel`)).status, 409);
    const models = (await owner.get(`/api/projects/${projectId}/models`)).body;
    assert.ok(!models.some((m: any) => m.experiment_id === experiment.id), 'nothing registered');
  });
});

describe('training without PyTorch', () => {
  let t: TestApp;
  before(async () => {
    // The pyenv interpreter first on the PATH has no torch: the service runs and says what to install.
    t = await startTestApp({ PYTHON: '/root/.pyenv/shims/python3' });
  });
  after(() => t.close());

  it('lists the torch adapters as unavailable with what to install, and refuses to train with 422', async () => {
    const owner = await t.user();
    const res = await owner.get('/api/training/adapters');
    assert.equal(res.status, 200);
    const detect = res.body.find((a: any) => a.name === 'versa-detect');
    assert.equal(detect.available, false);
    assert.match(detect.reason, /apt-get install -y python3-torch python3-torchvision/);
    const project = await owner.post('/api/projects', { name: 'p', project_type: 'object_detection' });
    const version = await owner.post(`/api/projects/${project.body.id}/versions`, { name: 'v' });
    await t.versa.deps.queue.drain();
    const train = await owner.post(`/api/projects/${project.body.id}/train`, { version_id: version.body.id });
    assert.equal(train.status, 422);
    assert.match(JSON.stringify(train.body.detail), /not available/);
  });
});

function iou(a: { x: number; y: number; width: number; height: number }, b: { x: number; y: number; width: number; height: number }): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  const inter = w > 0 && h > 0 ? w * h : 0;
  return inter / (a.width * a.height + b.width * b.height - inter);
}

/** A 64×64 JPEG of noise around a warm (red) or cool (blue) tint: learnable in a few epochs, never two alike. */
async function tinted(warm: boolean, seed: number): Promise<Buffer> {
  let state = seed * 2654435761;
  const rand = () => ((state = (Math.imul(state ^ (state >>> 15), 2246822519) + 3266489917) | 0) >>> 0) / 2 ** 32;
  const pixels = Buffer.alloc(64 * 64 * 3);
  const [r, g, b] = warm ? [200, 90, 60] : [60, 110, 200];
  for (let i = 0; i < 64 * 64; i++) {
    const shade = (rand() - 0.5) * 120;
    pixels[i * 3] = Math.max(0, Math.min(255, r + shade + (rand() - 0.5) * 40));
    pixels[i * 3 + 1] = Math.max(0, Math.min(255, g + shade + (rand() - 0.5) * 40));
    pixels[i * 3 + 2] = Math.max(0, Math.min(255, b + shade + (rand() - 0.5) * 40));
  }
  return sharp(pixels, { raw: { width: 64, height: 64, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

/**
 * The classifier's loop through the HTTP API for real: a classification project → version → versa-classify on the
 * CPU → experiment with accuracy and a confusion matrix → registered `classify` model → auto-annotate labels new
 * images with a `classification` annotation of the top class and its confidence.
 */
describe('training a classifier', { timeout: 10 * 60_000 }, () => {
  let t: TestApp;
  let owner: Client;
  let projectId: number;
  let versionId: number;
  let warm: number;
  let cool: number;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    const project = await owner.post('/api/projects', { name: 'tints', project_type: 'classification' });
    projectId = project.body.id;
    warm = await createClass(owner, projectId, 'warm');
    cool = await createClass(owner, projectId, 'cool');
    const files = await Promise.all(Array.from({ length: 60 }, async (_, i) => ({ name: `tint-${i}.jpg`, data: await tinted(i % 2 === 0, i + 1) })));
    const uploaded = await uploadImages(owner, projectId, files);
    for (const [i, image] of uploaded.entries()) {
      const res = await owner.post(`/api/images/${image.id}/annotations`, { class_id: i % 2 === 0 ? warm : cool, annotation_type: 'classification', geometry: {} });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const version = await owner.post(`/api/projects/${projectId}/versions`, { name: 'v1', seed: 3, preprocessing_config: { resize: { enabled: false } } });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    versionId = version.body.id;
    await t.versa.deps.queue.drain();
  });
  after(() => t.close());

  it('trains, records accuracy and the confusion matrix, registers a classify model and auto-annotates with it', async () => {
    const started = await owner.post(`/api/projects/${projectId}/train`, { version_id: versionId, adapter: 'versa-classify', epochs: 15, imgsz: 32, batch: 8, seed: 0, device: 'cpu' });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.adapter, 'versa-classify');
    let job: any;
    for (const deadline = Date.now() + 8 * 60_000; ; await sleep(250)) {
      job = (await owner.get(`/api/train/jobs/${started.body.id}`)).body;
      if (['succeeded', 'failed', 'cancelled'].includes(job.status)) break;
      assert.ok(Date.now() < deadline, `job still ${job.status}`);
    }
    assert.equal(job.status, 'succeeded', job.error);
    assert.ok(job.metrics.accuracy >= 0.9, `valid accuracy ${job.metrics.accuracy}`);

    const experiment = (await owner.get(`/api/experiments/${started.body.experiment_id}`)).body;
    assert.equal(experiment.history.length, 15);
    assert.ok(experiment.history[14].train_loss < experiment.history[0].train_loss, 'the loss falls');
    assert.deepEqual(experiment.per_class.map((c: any) => c.name), ['warm', 'cool']);
    const confusion: number[][] = experiment.confusion;
    assert.equal(confusion.length, 2);
    const validImages = (await owner.get(`/api/projects/${projectId}/versions/${versionId}`)).body;
    void validImages;
    assert.ok(confusion[0][0] + confusion[1][1] >= 0.9 * confusion.flat().reduce((s, n) => s + n, 0), JSON.stringify(confusion));

    const model = (await owner.get(`/api/projects/${projectId}/models`)).body.find((m: any) => m.id === job.model_id);
    assert.equal(model.task, 'classify');
    assert.deepEqual(model.class_names, ['warm', 'cool']);

    // The loop closes: new, unlabelled images get the trained model's top class and its confidence.
    const fresh = await uploadImages(owner, projectId, [
      { name: 'new-warm.jpg', data: await tinted(true, 1001) },
      { name: 'new-cool.jpg', data: await tinted(false, 1002) },
    ]);
    const annotated = await owner.post(`/api/projects/${projectId}/auto-annotate/yolo`, {
      model: model.id, confidence: 0.1, iou: 0.5, image_ids: fresh.map((f: any) => f.id), create_missing_classes: false,
    });
    assert.equal(annotated.status, 200, JSON.stringify(annotated.body));
    const byImage = new Map(annotated.body.images.map((i: any) => [i.image_id, i.annotations]));
    for (const [image, expected] of [[fresh[0].id, warm], [fresh[1].id, cool]] as const) {
      const annotations = byImage.get(image) as any[];
      assert.equal(annotations.length, 1, JSON.stringify(annotations));
      assert.equal(annotations[0].annotation_type, 'classification');
      assert.equal(annotations[0].class_id, expected);
      assert.ok(annotations[0].confidence > 0.5 && annotations[0].confidence <= 1, `confidence ${annotations[0].confidence}`);
      assert.equal(annotations[0].source, `model:${model.id}`);
    }
  });
});
