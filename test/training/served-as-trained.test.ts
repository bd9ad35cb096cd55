import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createClass, uploadImages } from '../helpers/version-fixtures.js';

type Box = { x: number; y: number; width: number; height: number };
type Found = { class_id: number; geometry: Box; confidence: number };

/**
 * Train/serve skew (issue 28): a detector trained through the API on a version that *stretches* wide photos to a
 * square is used on the original photos. It must see each photo as it saw its training images: its boxes on an
 * original equal its boxes on that photo made by the version's preprocessing, mapped back. Letterboxing the original
 * instead (what inference did before) shows the model objects squashed to a third of the height it learnt.
 */
describe('a trained model is served as it was trained', { timeout: 12 * 60_000 }, () => {
  const WIDTH = 288;
  const HEIGHT = 96;
  const SIDE = 128;
  let t: TestApp;
  let runsRoot: string;
  let owner: Client;
  let projectId: number;
  let modelId: number;

  before(async () => {
    runsRoot = await mkdtemp(join(tmpdir(), 'versa-served-'));
    t = await startTestApp({ RUNS_ROOT: runsRoot });
    owner = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'wide', project_type: 'object_detection' })).body.id;
    const classIds = new Map<string, number>();
    for (const c of SHAPE_CLASSES) classIds.set(c.name, await createClass(owner, projectId, c.name));
    const images = await generateDataset('served-as-trained', 48, { width: WIDTH, height: HEIGHT, count: [1, 2], masks: false, format: 'jpeg' });
    const uploaded = await uploadImages(owner, projectId, images.map((i) => ({ name: i.filename, data: i.data })));
    for (const [i, image] of images.entries()) {
      for (const shape of image.shapes) {
        const res = await owner.post(`/api/images/${uploaded[i].id}/annotations`, { class_id: classIds.get(shape.className), annotation_type: 'bbox', geometry: shape.bbox });
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    }
    const version = await owner.post(`/api/projects/${projectId}/versions`, {
      name: 'stretched', seed: 3, preprocessing_config: { resize: { enabled: true, width: SIDE, height: SIDE, mode: 'stretch' } },
    });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    await t.versa.deps.queue.drain();
    const started = await owner.post(`/api/projects/${projectId}/train`, {
      version_id: version.body.id, model: 'versa-detect-n', epochs: 16, imgsz: SIDE, batch: 8, seed: 1, device: 'cpu', require_ready: false,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    for (;;) {
      const job = (await owner.get(`/api/train/jobs/${started.body.id}`)).body;
      if (job.status === 'succeeded') {
        modelId = job.model_id;
        break;
      }
      assert.ok(['queued', 'running'].includes(job.status), `training ${job.status}: ${job.error}`);
      await sleep(250);
    }
  });
  after(async () => {
    await t.close();
    await rm(runsRoot, { recursive: true, force: true });
  });

  const annotate = async (files: { name: string; data: Buffer }[]) => {
    const uploaded = await uploadImages(owner, projectId, files);
    const res = await owner.post(`/api/projects/${projectId}/auto-annotate/yolo`, {
      model: modelId, confidence: 0.1, iou: 0.5, image_ids: uploaded.map((u: any) => u.id), create_missing_classes: false,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return uploaded.map((u: any) => (res.body.images.find((i: any) => i.image_id === u.id)?.annotations ?? []) as Found[]);
  };

  it("finds on an original photo what it finds on the version's image of that photo", async () => {
    const fresh = await generateDataset('served-as-trained-new', 8, { width: WIDTH, height: HEIGHT, count: [1, 2], masks: false, format: 'jpeg' });
    const served = await annotate(fresh.map((i) => ({ name: `original-${i.filename}`, data: i.data })));
    // The version's image of each photo, made as a version makes it (stretched, JPEG 90), then scaled back.
    const stretched = await Promise.all(fresh.map(async (i) => ({ name: `stretched-${i.filename}`, data: await sharp(i.data).resize(SIDE, SIDE, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer() })));
    const trained = (await annotate(stretched)).map((boxes) => boxes.map((a) => ({
      ...a,
      geometry: { x: (a.geometry.x * WIDTH) / SIDE, y: (a.geometry.y * HEIGHT) / SIDE, width: (a.geometry.width * WIDTH) / SIDE, height: (a.geometry.height * HEIGHT) / SIDE },
    })));
    // Both ways round, each box scored clearly above the 0.1 cut must be found by the other way, at 0.1: a box near
    // the cut may fall either side of it after the two JPEG encodings. The bars sit low because 16 epochs on 48 images
    // make a weak model whose scores vary with the CPU it trained on (CI's found 4 boxes over 0.4 where this machine's
    // found 8); what is compared is how the model is served, not how well it learnt.
    const SURE = 0.2;
    const found = (from: Found[][], to: Found[][]) => {
      const sure = from.flatMap((boxes, i) => boxes.filter((b) => b.confidence >= SURE).map((b) => ({ b, i })));
      const hits = sure.filter(({ b, i }) => to[i].some((o) => o.class_id === b.class_id && iou(o.geometry, b.geometry) >= 0.7)).length;
      return { hits, of: sure.length };
    };
    const recall = found(trained, served);
    const precision = found(served, trained);
    assert.ok(recall.of >= 6, `the model finds ${recall.of} objects on the version's images`);
    // Three in four both ways: the skew this guards against found 0 of 12 (a64b2a7); a weak model's boxes near the
    // cut gave 11 of 13 in one full-suite run here (0.85), so 0.9 asked more of the learning than of the serving.
    assert.ok(recall.hits >= 0.75 * recall.of && precision.hits >= 0.75 * precision.of,
      `${recall.hits} of ${recall.of} boxes on the version's images found on the originals; ${precision.hits} of ${precision.of} the other way`);
  });
});

function iou(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / (a.width * a.height + b.width * b.height - w * h);
}
