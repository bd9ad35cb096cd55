import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createClass, uploadImages } from '../helpers/version-fixtures.js';

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
