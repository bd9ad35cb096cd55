import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';
import { multipart } from '../helpers/multipart.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createClass, uploadImages } from '../helpers/version-fixtures.js';

/**
 * Evaluation you can act on (issue 28): a detector trained through the API on a version stretched from 96 × 80 to
 * 64 × 64 records per-class AP, PR curves, F1 thresholds and a confusion matrix with background; its errors are
 * ranked per image and mapped back to the project images; promotion stores the thresholds; auto-annotate uses them.
 */
describe('experiment evaluation and error browser', { timeout: 15 * 60_000 }, () => {
  const SIZE = { width: 96, height: 80 };
  const SIDE = 64;
  let t: TestApp;
  let owner: Client;
  let stranger: Client;
  let projectId: number;
  let experiment: any;
  let imageIds: number[];

  before(async () => {
    t = await startTestApp();
    await t.user(); // the first account is instance admin
    owner = await t.user();
    stranger = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'shapes', project_type: 'object_detection' })).body.id;
    const ids = new Map<string, number>();
    for (const c of SHAPE_CLASSES) ids.set(c.name, await createClass(owner, projectId, c.name));
    const images = await generateDataset('evaluation', 30, { ...SIZE, count: [1, 3], masks: false, format: 'jpeg' });
    const uploaded = await uploadImages(owner, projectId, images.map((i) => ({ name: i.filename, data: i.data })));
    imageIds = uploaded.map((u: { id: number }) => u.id);
    for (const [i, image] of images.entries()) {
      for (const shape of image.shapes) {
        const res = await owner.post(`/api/images/${uploaded[i].id}/annotations`, { class_id: ids.get(shape.className), annotation_type: 'bbox', geometry: shape.bbox });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    }
    const version = await owner.post(`/api/projects/${projectId}/versions`, {
      name: 'stretched', seed: 3, split_config: { train: 60, valid: 40, test: 0 }, preprocessing_config: { resize: { enabled: true, width: SIDE, height: SIDE, mode: 'stretch' } },
    });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    await t.versa.deps.queue.drain();
    const started = await owner.post(`/api/projects/${projectId}/train`, {
      version_id: version.body.id, model: 'versa-detect-n', epochs: 15, imgsz: SIDE, batch: 8, seed: 1, device: 'cpu', require_ready: false,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    for (;;) {
      const job = (await owner.get(`/api/train/jobs/${started.body.id}`)).body;
      if (!['queued', 'running'].includes(job.status)) {
        assert.equal(job.status, 'succeeded', JSON.stringify(job));
        experiment = (await owner.get(`/api/experiments/${job.experiment_id}`)).body;
        break;
      }
      await sleep(250);
    }
  });
  after(() => t.close());

  it('records per class AP, a 101-point PR curve and the F1-maximising threshold, and a confusion matrix with background', () => {
    const valid = experiment.analysis?.valid;
    assert.ok(valid, `no analysis: ${JSON.stringify(Object.keys(experiment))}`);
    assert.deepEqual(valid.per_class.map((c: any) => c.name), SHAPE_CLASSES.map((c) => c.name));
    for (const c of valid.per_class.filter((c: any) => c.instances > 0)) {
      assert.equal(c.pr_curve.length, 101);
      assert.equal(typeof c.ap50, 'number');
      assert.equal(typeof c.f1, 'number');
      assert.ok(c.conf_threshold === null || (c.conf_threshold > 0 && c.conf_threshold <= 1));
    }
    assert.deepEqual(valid.confusion.labels, [...SHAPE_CLASSES.map((c) => c.name), 'background']);
    const n = SHAPE_CLASSES.length + 1;
    assert.equal(valid.confusion.matrix.length, n);
    // Every ground-truth object is counted once in its row: found, confused or missed (background column).
    const objects = valid.per_class.reduce((sum: number, c: any) => sum + c.instances, 0);
    const counted = valid.confusion.matrix.slice(0, n - 1).flat().reduce((a: number, b: number) => a + b, 0);
    assert.equal(counted, objects);
  });

  it('ranks the images with the most errors of a kind, as project images with the predictions in their pixels', async () => {
    const matrix = experiment.analysis.valid.confusion.matrix as number[][];
    const nc = matrix.length - 1;
    const missed = matrix.slice(0, nc).reduce((sum, row) => sum + row[nc], 0);
    const spurious = matrix[nc].reduce((a, b) => a + b, 0);
    const fn = await owner.get(`/api/experiments/${experiment.id}/errors?split=valid&kind=false_negative&limit=500`);
    assert.equal(fn.status, 200, JSON.stringify(fn.body));
    assert.equal(fn.body.images.reduce((sum: number, i: any) => sum + i.false_negatives, 0), missed);
    const counts = fn.body.images.map((i: any) => i.false_negatives);
    assert.deepEqual(counts, [...counts].sort((a: number, b: number) => b - a), 'most false negatives first');
    assert.ok(counts.every((c: number) => c > 0));
    const fp = await owner.get(`/api/experiments/${experiment.id}/errors?kind=false_positive&limit=500`);
    assert.equal(fp.body.images.reduce((sum: number, i: any) => sum + i.false_positives, 0), spurious);
    const all = await owner.get(`/api/experiments/${experiment.id}/errors?limit=2`);
    assert.ok(all.body.images.length <= 2);
    assert.ok(all.body.total >= all.body.images.length);
    for (const image of all.body.images) assert.ok(imageIds.includes(image.image_id), `image ${image.image_id} is a project image`);

    // The run's predictions (64 × 64 version pixels) are drawn on the 96 × 80 project image.
    const row = await t.versa.deps.db.selectFrom('experiments').select('run_dir').where('id', '=', experiment.id).executeTakeFirstOrThrow();
    const file = JSON.parse(await readFile(join(row.run_dir!, 'evaluation.json'), 'utf8'));
    const withPredictions = [...fn.body.images, ...fp.body.images].find((i: any) => i.predictions.length > 0);
    assert.ok(withPredictions, 'some image with errors has predictions');
    const versionImage = await t.versa.deps.db.selectFrom('version_images').select(['filename', 'split']).where('id', '=', withPredictions.version_image_id).executeTakeFirstOrThrow();
    const raw = file.splits.valid.images.find((i: any) => i.file === `images/${versionImage.split}/${versionImage.filename}`);
    const [c, x, y, w, h, score] = raw.predictions[0];
    const mapped = withPredictions.predictions[0];
    assert.equal(mapped.class_name, SHAPE_CLASSES[c].name);
    assert.equal(mapped.confidence, score);
    const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 0.05, `${a} ≠ ${b}`);
    close(mapped.bbox.x, (x * SIZE.width) / SIDE);
    close(mapped.bbox.y, (y * SIZE.height) / SIDE);
    close(mapped.bbox.width, (w * SIZE.width) / SIDE);
    close(mapped.bbox.height, (h * SIZE.height) / SIDE);
  });

  it('answers 401, 404 and 422 as every route does, and an annotator kept to assignments sees only theirs', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: `/api/experiments/${experiment.id}/errors` })).statusCode, 401);
    assert.equal((await stranger.get(`/api/experiments/${experiment.id}/errors`)).status, 404);
    assert.equal((await owner.get(`/api/experiments/999999/errors`)).status, 404);
    const bad = await owner.get(`/api/experiments/${experiment.id}/errors?kind=wrong`);
    assert.equal(bad.status, 422);
    assert.ok(bad.body.detail);
    assert.equal((await owner.get(`/api/experiments/${experiment.id}/errors?split=train`)).status, 422);

    const all = (await owner.get(`/api/experiments/${experiment.id}/errors?limit=500`)).body.images as any[];
    assert.ok(all.length >= 2, 'a short run gets several images wrong');
    const annotator = await t.user();
    await owner.patch(`/api/projects/${projectId}`, { assigned_only: true });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: annotator.id, role: 'annotator' });
    await owner.post(`/api/projects/${projectId}/assignments`, { user_id: annotator.id, image_ids: [all[1].image_id] });
    const theirs = await annotator.get(`/api/experiments/${experiment.id}/errors?limit=500`);
    assert.equal(theirs.status, 200);
    assert.deepEqual(theirs.body.images.map((i: any) => i.image_id), [all[1].image_id]);
    assert.equal(theirs.body.total, 1);
    await owner.patch(`/api/projects/${projectId}`, { assigned_only: false });
  });

  it('stores the run\'s F1 thresholds on the model when it is promoted to production', async () => {
    const listed = async () => ((await owner.get(`/api/models?project_id=${projectId}`)).body as any[]).find((m) => m.id === experiment.model_id);
    assert.equal((await listed()).class_thresholds, null);
    const promoted = await owner.patch(`/api/models/${experiment.model_id}/lifecycle`, { lifecycle: 'production' });
    assert.equal(promoted.status, 200, JSON.stringify(promoted.body));
    const expected = Object.fromEntries(experiment.analysis.valid.per_class.filter((c: any) => c.conf_threshold !== null).map((c: any) => [c.name, c.conf_threshold]));
    assert.ok(Object.keys(expected).length > 0);
    assert.deepEqual(promoted.body.class_thresholds, expected);
    assert.deepEqual((await listed()).class_thresholds, expected);
  });

  it('auto-annotates with the model\'s per-class thresholds when the request gives no confidence', async () => {
    // The fixture detector scores a square by its colour's brightness: red 0.6, green 0.6.
    const RED: Square = { x: 30, y: 40, width: 36, height: 30, colour: [153, 0, 0] };
    const GREEN: Square = { x: 120, y: 20, width: 50, height: 70, colour: [0, 153, 0] };
    const target = (await owner.post('/api/projects', { name: 'thresholds' })).body.id as number;
    const upload = await owner.request({ method: 'POST', url: `/api/projects/${target}/models/upload`, ...multipart([{ name: 'file', filename: 'det.onnx', data: Buffer.from(buildYoloModel('v8')) }]) });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const images = await owner.request({ method: 'POST', url: `/api/projects/${target}/images`, ...multipart([{ filename: 'a.png', data: await squaresPng(200, 120, [RED, GREEN]), contentType: 'image/png' }]) });
    assert.equal(images.status, 201);
    // What promotion stores (tested above), for a model whose scores are known: red needs 0.9, green 0.3.
    await t.versa.deps.db.updateTable('models').set({ class_thresholds: JSON.stringify({ red: 0.9, green: 0.3 }) }).where('id', '=', upload.body.id).execute();
    const byDefault = await owner.post(`/api/projects/${target}/auto-annotate/yolo`, { model: upload.body.id, iou: 0.5 });
    assert.equal(byDefault.status, 200, JSON.stringify(byDefault.body));
    assert.equal(byDefault.body.created, 1, 'the red square (0.6 < 0.9) is left out, the green one kept');
    assert.deepEqual(byDefault.body.classes_created, ['green']);
    const given = await owner.post(`/api/projects/${target}/auto-annotate/yolo`, { model: upload.body.id, iou: 0.5, confidence: 0.25 });
    assert.equal(given.body.created, 2, 'a given confidence overrides the thresholds');
  });
});
