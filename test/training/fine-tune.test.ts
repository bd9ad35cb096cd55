import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';
import { multipart } from '../helpers/multipart.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createClass, uploadImages } from '../helpers/version-fixtures.js';

/**
 * Fine-tuning through the API (issue 28): a detector trained on the shapes, then a second project whose classes are
 * the same shapes but one renamed (so the base's 'purple-hexagon' is dropped and 'hexagon' is new) and in another
 * order, trained 2 epochs from the base and 2 epochs from scratch. Starting from the base is what makes the matched
 * classes good at once; the refusals come before anything is recorded.
 */
describe('fine-tuning from a registered model', { timeout: 15 * 60_000 }, () => {
  const SIZE = { width: 96, height: 80 };
  const RENAMED = new Map([['purple-hexagon', 'hexagon']]);
  const TARGET_CLASSES = ['hexagon', 'yellow-ellipse', 'blue-triangle', 'green-circle', 'red-rectangle'];
  const MATCHED = TARGET_CLASSES.filter((c) => c !== 'hexagon');
  let t: TestApp;
  let modelsRoot: string;
  let owner: Client;
  let stranger: Client;
  let base: { projectId: number; versionId: number; modelId: number; experimentId: number };
  let target: { projectId: number; versionId: number };

  const train = async (client: Client, projectId: number, body: Record<string, unknown>) => {
    const started = await client.post(`/api/projects/${projectId}/train`, { device: 'cpu', batch: 8, seed: 1, require_ready: false, ...body });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    for (;;) {
      const job = (await client.get(`/api/train/jobs/${started.body.id}`)).body;
      if (!['queued', 'running'].includes(job.status)) return { job, experiment: (await client.get(`/api/experiments/${job.experiment_id}`)).body };
      await sleep(250);
    }
  };

  /** A detection project of generated shapes, its classes created in `classes` order, and a ready version. */
  const shapesProject = async (name: string, seed: string, classes: string[], rename = new Map<string, string>()) => {
    const projectId = (await owner.post('/api/projects', { name, project_type: 'object_detection' })).body.id as number;
    const ids = new Map<string, number>();
    for (const c of classes) ids.set(c, await createClass(owner, projectId, c));
    const images = await generateDataset(seed, 40, { ...SIZE, count: [1, 3], masks: false, format: 'jpeg' });
    const uploaded = await uploadImages(owner, projectId, images.map((i) => ({ name: i.filename, data: i.data })));
    for (const [i, image] of images.entries()) {
      for (const shape of image.shapes) {
        const res = await owner.post(`/api/images/${uploaded[i].id}/annotations`, {
          class_id: ids.get(rename.get(shape.className) ?? shape.className), annotation_type: 'bbox', geometry: shape.bbox,
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    }
    const version = await owner.post(`/api/projects/${projectId}/versions`, { name: 'v1', seed: 7, preprocessing_config: { resize: { enabled: false } } });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    await t.versa.deps.queue.drain();
    return { projectId, versionId: version.body.id as number };
  };

  const matchedMap50 = (experiment: any) => {
    const rows = experiment.per_class.filter((c: any) => MATCHED.includes(c.name) && c.instances > 0);
    return rows.reduce((sum: number, c: any) => sum + c.map50, 0) / rows.length;
  };

  before(async () => {
    modelsRoot = await mkdtemp(join(tmpdir(), 'versa-pretrained-'));
    t = await startTestApp({ MODELS_ROOT: modelsRoot });
    owner = await t.user();
    stranger = await t.user();
    const first = await shapesProject('shapes', 'fine-tune-base', SHAPE_CLASSES.map((c) => c.name));
    const { job, experiment } = await train(owner, first.projectId, { version_id: first.versionId, model: 'versa-detect-n', epochs: 20, imgsz: 96 });
    assert.equal(job.status, 'succeeded', job.error);
    assert.ok(job.metrics.map50 > 0.5, `the base reaches valid mAP50 ${job.metrics.map50}`);
    base = { ...first, modelId: job.model_id, experimentId: experiment.id };
    // An operator's copy of the checkpoint (for the MODELS_ROOT case), then the base's run folder goes: as when it was
    // trained on another worker, whose scratch space this machine never sees (issue 27). Fine-tuning reads the store.
    const runDir = (await t.versa.deps.db.selectFrom('experiments').select('run_dir').where('id', '=', base.experimentId).executeTakeFirstOrThrow()).run_dir!;
    await mkdir(join(modelsRoot, 'shapes'), { recursive: true });
    await copyFile(join(runDir, 'weights', 'best.pt'), join(modelsRoot, 'shapes', 'detector.pt'));
    await rm(runDir, { recursive: true, force: true });
    target = await shapesProject('shapes renamed', 'fine-tune-target', TARGET_CLASSES, RENAMED);
  });
  after(async () => {
    await t.close();
    await rm(modelsRoot, { recursive: true, force: true });
  });

  it('starts from the base (its checkpoint read from the store): matched classes keep what they learnt, a new class gets fresh rows, a removed one is dropped', async () => {
    const tuned = await train(owner, target.projectId, { version_id: target.versionId, base_model_id: base.modelId, epochs: 2 });
    assert.equal(tuned.job.status, 'succeeded', tuned.job.error);
    const scratch = await train(owner, target.projectId, { version_id: target.versionId, model: 'versa-detect-n', imgsz: 96, epochs: 2 });
    assert.equal(scratch.job.status, 'succeeded', scratch.job.error);

    const e = tuned.experiment;
    assert.equal(e.params.base_model_id, base.modelId);
    assert.equal(e.params.model, 'versa-detect-n', 'the architecture defaults to the base model\'s');
    assert.equal(e.params.imgsz, 96, 'so does the input size');
    assert.deepEqual(e.recipe.initial_weights, {
      from: 'model', model_id: base.modelId, model_name: (await owner.get(`/api/projects/${base.projectId}/models`)).body[0].name,
      project_id: base.projectId, experiment_id: base.experimentId, class_names: SHAPE_CLASSES.map((c) => c.name),
      matched: MATCHED, new: ['hexagon'], dropped: ['purple-hexagon'],
    });
    const model = (await owner.get(`/api/projects/${target.projectId}/models`)).body.find((m: any) => m.id === tuned.job.model_id);
    assert.deepEqual(model.class_names, TARGET_CLASSES);
    assert.deepEqual(e.per_class.map((c: any) => c.name), TARGET_CLASSES);
    const fromBase = matchedMap50(e);
    const fromScratch = matchedMap50(scratch.experiment);
    assert.ok(fromBase >= 0.5 && fromBase >= fromScratch + 0.3, `matched classes' valid mAP50 after 2 epochs: ${fromBase.toFixed(3)} from the base, ${fromScratch.toFixed(3)} from scratch`);
    assert.equal(scratch.experiment.recipe.initial_weights, undefined);
  });

  it('loads operator-supplied weights from MODELS_ROOT by the same path', async () => {
    // A Versa checkpoint copied under MODELS_ROOT (as an operator would, in before()) starts a run like a base model does.
    const run = await train(owner, target.projectId, { version_id: target.versionId, pretrained_weights: 'shapes/detector.pt', model: 'versa-detect-n', imgsz: 96, epochs: 1 });
    assert.equal(run.job.status, 'succeeded', run.job.error);
    assert.equal(run.experiment.params.pretrained_weights, 'shapes/detector.pt');
    assert.deepEqual(run.experiment.recipe.initial_weights, { from: 'pretrained_weights', path: 'shapes/detector.pt', matched: MATCHED, new: ['hexagon'], dropped: ['purple-hexagon'] });
    assert.ok(matchedMap50(run.experiment) >= 0.5, `matched classes after 1 epoch: ${matchedMap50(run.experiment)}`);
  });

  it('refuses what it cannot start from (404, 422, 403) and records nothing', async () => {
    const url = `/api/projects/${target.projectId}/train`;
    const body = { version_id: target.versionId, require_ready: false, epochs: 1 };
    const before = (await owner.get(`/api/projects/${target.projectId}/experiments`)).body.length;
    const refused = async (client: Client, extra: Record<string, unknown>, status: number, pattern: RegExp, projectUrl = url) => {
      const res = await client.post(projectUrl, { ...body, ...extra });
      assert.equal(res.status, status, JSON.stringify(res.body));
      const detail = typeof res.body.detail === 'string' ? res.body.detail : JSON.stringify(res.body.detail);
      assert.match(detail, pattern);
      return res;
    };
    await refused(owner, { base_model_id: 999_999 }, 404, /Model 999999 not found/);
    // The stranger's own project, starting from the owner's model: they cannot read it.
    const theirs = (await stranger.post('/api/projects', { name: 'theirs', project_type: 'object_detection' })).body.id;
    const [image] = await generateDataset('stranger', 1, { ...SIZE, count: [1, 1], masks: false, format: 'jpeg' });
    await uploadImages(stranger, theirs, [{ name: image.filename, data: image.data }]);
    const theirVersion = await stranger.post(`/api/projects/${theirs}/versions`, { name: 'v', preprocessing_config: { resize: { enabled: false } } });
    await t.versa.deps.queue.drain();
    await refused(stranger, { base_model_id: base.modelId, version_id: theirVersion.body.id }, 404, new RegExp(`Model ${base.modelId} not found`), `/api/projects/${theirs}/train`);

    const wrongModel = await refused(owner, { base_model_id: base.modelId, model: 'versa-detect-s' }, 422, /versa-detect-n; fine-tuning keeps its architecture/);
    assert.deepEqual(wrongModel.body.detail[0].loc, ['body', 'model']);
    await refused(owner, { base_model_id: base.modelId, pretrained_weights: 'shapes/detector.pt' }, 422, /not both/);
    await refused(owner, { base_model_id: base.modelId, adapter: 'ultralytics' }, 422, /does not fine-tune a registered model/);

    // An uploaded ONNX file has no trainer checkpoint; a classifier cannot start a detector.
    const upload = async (data: Uint8Array, filename: string, fields: Record<string, string>) => {
      const res = await owner.request({ method: 'POST', url: `/api/projects/${target.projectId}/models/upload`, ...multipart([{ name: 'file', filename, data: Buffer.from(data) }], fields) });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as number;
    };
    const uploaded = await upload(buildYoloModel('v8'), 'uploaded.onnx', {});
    const noCheckpoint = await refused(owner, { base_model_id: uploaded }, 422, /not trained by Versa \(source upload\).*no trainer checkpoint/);
    assert.deepEqual(noCheckpoint.body.detail[0].loc, ['body', 'base_model_id']);
    const classifier = await upload(buildYoloModel('v5'), 'classifier.onnx', { task: 'classify' });
    await refused(owner, { base_model_id: classifier }, 422, /is a classify model; versa-detect trains detect models/);

    await refused(owner, { pretrained_weights: '../outside.pt' }, 403, /outside MODELS_ROOT/);
    await refused(owner, { pretrained_weights: 'missing.pt' }, 422, /No such file under MODELS_ROOT/);
    assert.equal((await owner.get(`/api/projects/${target.projectId}/experiments`)).body.length, before, 'nothing was recorded');
  });
});
