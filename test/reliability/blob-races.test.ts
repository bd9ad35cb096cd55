/**
 * Drills for content-addressed files written by concurrent requests (issue 11, High 2): parallel uploads of the same
 * model bytes (one 201, the others 409) and of the same image bytes must never leave the winner's row without its
 * file: a refused or losing request removes only what it alone wrote.
 */
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('content-addressed blob races', () => {
  let t: TestApp;
  let alice: User;
  const model = Buffer.from(buildYoloModel('v8'));
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  const exists = (key: string) => access(join(t.dataDir, 'blobs', key)).then(() => true, () => false);

  it('three parallel uploads of the same model, ten rounds: one 201, two 409, the stored model still runs', async () => {
    const image = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
    for (let round = 0; round < 10; round++) {
      const projectId = (await alice.post('/api/projects', { name: `race ${round}` })).body.id as number;
      const uploaded = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart([{ filename: 'a.png', data: image, contentType: 'image/png' }]) });
      assert.equal(uploaded.status, 201);
      const results = await Promise.all(
        [0, 1, 2].map(() => alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'det.onnx', data: model }]) })),
      );
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [201, 409, 409], JSON.stringify(results.map((r) => r.body)));
      const winner = results.find((r) => r.status === 201)!.body;
      assert.ok(await exists(winner.blob), `round ${round}: the registered model's file is still there`);
      const run = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: winner.id, confidence: 0.25, iou: 0.5 });
      assert.equal(run.status, 200, `round ${round}: ${JSON.stringify(run.body)}`);
    }
  });

  it('parallel uploads of the same image bytes, ten rounds: the stored image and thumbnail stay readable', async () => {
    const projectId = (await alice.post('/api/projects', { name: 'image race' })).body.id as number;
    for (let round = 0; round < 10; round++) {
      const image = await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: round * 20, g: 90, b: 30 }, noise: { type: 'gaussian', mean: 90, sigma: 30 } } }).jpeg().toBuffer();
      const results = await Promise.all(
        [0, 1, 2, 3].map((k) => alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart([{ filename: `r${round}-${k}.jpg`, data: image, contentType: 'image/jpeg' }]) })),
      );
      for (const r of results) assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
      const id = results[0].body.images[0].id;
      assert.ok(results.every((r) => r.body.images[0].id === id), 'one image for the same bytes');
      const file = await alice.get(`/api/projects/${projectId}/images/file/${encodeURIComponent(results[0].body.images[0].filename)}`);
      assert.equal(file.status, 200, `round ${round}: image file`);
      const thumbnail = await alice.get(`/api/images/${id}/thumbnail`);
      assert.equal(thumbnail.status, 200, `round ${round}: thumbnail`);
    }
  });
});
