import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';
import { shapeGeometry } from '../../src/synthetic/annotations.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createClass, uploadImages } from '../helpers/version-fixtures.js';

/**
 * Semantic segmentation trains through the API (issue 28): a semantic project's masks and polygons become per-class
 * maps, versa-segment learns them, the run reports mIoU and per-class IoU and registers a segment model, and
 * auto-annotate turns the model's class map into polygon suggestions.
 */
describe('versa-segment trains semantic segmentation through the API', { timeout: 10 * 60_000 }, () => {
  let t: TestApp;
  let runsRoot: string;
  let owner: Client;
  let projectId: number;
  let job: any;
  let experiment: any;

  before(async () => {
    runsRoot = await mkdtemp(join(tmpdir(), 'versa-segment-'));
    t = await startTestApp({ RUNS_ROOT: runsRoot });
    owner = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'semantic', project_type: 'semantic_segmentation' })).body.id;
    const classIds = new Map<string, number>();
    for (const c of SHAPE_CLASSES) classIds.set(c.name, await createClass(owner, projectId, c.name));
    const images = await generateDataset('semantic-api', 30, { width: 96, height: 80, count: [1, 3], masks: true, format: 'png' });
    const uploaded = await uploadImages(owner, projectId, images.map((i) => ({ name: i.filename, data: i.data })));
    for (const [i, image] of images.entries()) {
      for (const shape of image.shapes) {
        // Masks and polygons both: the trainer rasterises either into the class map.
        const type = i % 2 === 0 ? 'mask' : 'polygon';
        const res = await owner.post(`/api/images/${uploaded[i].id}/annotations`, { class_id: classIds.get(shape.className), annotation_type: type, geometry: shapeGeometry(shape, type) });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    }
    const version = await owner.post(`/api/projects/${projectId}/versions`, { name: 'v1', seed: 1 });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    await t.versa.deps.queue.drain();
    const started = await owner.post(`/api/projects/${projectId}/train`, {
      version_id: version.body.id, epochs: 16, imgsz: 96, batch: 4, seed: 1, device: 'cpu', require_ready: false,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    for (;;) {
      job = (await owner.get(`/api/train/jobs/${started.body.id}`)).body;
      if (!['queued', 'running'].includes(job.status)) break;
      await sleep(250);
    }
    experiment = (await owner.get(`/api/experiments/${job.experiment_id}`)).body;
  });
  after(async () => {
    await t.close();
    await rm(runsRoot, { recursive: true, force: true });
  });

  it('defaults to versa-segment, reports mIoU and per-class IoU, and registers a segment model', async () => {
    assert.equal(job.status, 'succeeded', job.error);
    assert.equal(experiment.adapter, 'versa-segment');
    assert.ok(experiment.metrics.miou_fg > 0.15, `valid mIoU without background ${experiment.metrics.miou_fg} (${JSON.stringify(experiment.history.map((h: any) => h.miou_fg))})`);
    assert.deepEqual(experiment.per_class.map((c: any) => c.name), SHAPE_CLASSES.map((c) => c.name));
    assert.ok(experiment.per_class.some((c: any) => c.iou > 0), JSON.stringify(experiment.per_class));
    const model = (await owner.get(`/api/projects/${projectId}/models`)).body.find((m: any) => m.id === job.model_id);
    assert.equal(model.task, 'segment');
    assert.deepEqual(model.class_names, SHAPE_CLASSES.map((c) => c.name));
  });

  it('auto-annotates with the model: class regions become polygon suggestions', async () => {
    const fresh = await generateDataset('semantic-api-new', 4, { width: 96, height: 80, count: [1, 3], masks: true, format: 'png' });
    const uploaded = await uploadImages(owner, projectId, fresh.map((i) => ({ name: `new-${i.filename}`, data: i.data })));
    const res = await owner.post(`/api/projects/${projectId}/auto-annotate/yolo`, {
      model: job.model_id, confidence: 0.3, iou: 0.5, image_ids: uploaded.map((u: any) => u.id), create_missing_classes: false,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const written = res.body.images.flatMap((i: any) => i.annotations);
    assert.ok(written.length > 0, 'the model suggests shapes');
    assert.ok(written.every((a: any) => a.annotation_type === 'polygon' && a.geometry.points.length >= 3 && a.status === 'suggested'), JSON.stringify(written[0]));
  });
});

/** Instance segmentation projects can train versa-segment too: each object a polygon, measured by mask mAP. */
describe('versa-segment trains instance segmentation through the API', { timeout: 10 * 60_000 }, () => {
  let t: TestApp;
  let runsRoot: string;

  before(async () => {
    runsRoot = await mkdtemp(join(tmpdir(), 'versa-segment-instances-'));
    t = await startTestApp({ RUNS_ROOT: runsRoot });
  });
  after(async () => {
    await t.close();
    await rm(runsRoot, { recursive: true, force: true });
  });

  it('reports mask mAP50 and mAP50-95 over the objects, per class too', async () => {
    const owner = await t.user();
    const projectId = (await owner.post('/api/projects', { name: 'instances', project_type: 'instance_segmentation' })).body.id;
    const classId = await createClass(owner, projectId, 'shape');
    // Two to three objects of one class per image: the map alone cannot tell them apart, the metric must.
    const images = await generateDataset('instance-api', 30, { width: 96, height: 80, count: [2, 3], masks: true, format: 'png' });
    const uploaded = await uploadImages(owner, projectId, images.map((i) => ({ name: i.filename, data: i.data })));
    for (const [i, image] of images.entries()) {
      for (const shape of image.shapes) {
        const res = await owner.post(`/api/images/${uploaded[i].id}/annotations`, { class_id: classId, annotation_type: 'polygon', geometry: shapeGeometry(shape, 'polygon') });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    }
    const version = await owner.post(`/api/projects/${projectId}/versions`, { name: 'v1', seed: 1 });
    await t.versa.deps.queue.drain();
    const started = await owner.post(`/api/projects/${projectId}/train`, {
      version_id: version.body.id, adapter: 'versa-segment', epochs: 12, imgsz: 96, batch: 4, seed: 1, device: 'cpu', require_ready: false,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    let job: any;
    for (;;) {
      job = (await owner.get(`/api/train/jobs/${started.body.id}`)).body;
      if (!['queued', 'running'].includes(job.status)) break;
      await sleep(250);
    }
    assert.equal(job.status, 'succeeded', job.error);
    const experiment = (await owner.get(`/api/experiments/${job.experiment_id}`)).body;
    assert.ok(experiment.metrics.mask_map50 > 0.1, `valid mask mAP50 ${experiment.metrics.mask_map50}`);
    assert.ok(experiment.metrics.mask_map50_95 > 0 && experiment.metrics.mask_map50_95 <= experiment.metrics.mask_map50, JSON.stringify(experiment.metrics));
    assert.equal(experiment.per_class[0].mask_ap50, experiment.metrics.mask_map50);
    assert.ok(experiment.per_class[0].instances >= 2 * 3, JSON.stringify(experiment.per_class));
  });
});
