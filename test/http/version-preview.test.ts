import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('version recipe preview', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    await t.user();
  });
  after(() => t.close());

  it('renders the first outputs with their boxes moved along, stores nothing; 401, 403, 404, 422', async () => {
    const alice = await t.user();
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const png = await squaresPng(200, 100, [{ x: 10, y: 20, width: 40, height: 30, colour: [255, 0, 0] }]);
    const up = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart([{ filename: 'a.png', data: png, contentType: 'image/png' }]) });
    const imageId = up.body.images[0].id as number;
    const cls = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'red' })).body.id as number;
    await alice.post(`/api/images/${imageId}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: { x: 10, y: 20, width: 40, height: 30 } });
    const body = { preprocessing_config: { resize: { enabled: true, width: 100, height: 50, mode: 'stretch' } }, augmentation_config: { outputs_per_image: 3, flip_horizontal: true } };
    const res = await alice.post(`/api/projects/${projectId}/versions/preview`, body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.image_id, imageId);
    assert.equal(res.body.outputs.length, 3, 'one per augmented output');
    for (const o of res.body.outputs) {
      assert.match(o.data_url, /^data:image\/jpeg;base64,/);
      assert.equal(o.width, 100);
      assert.equal(o.height, 50);
      assert.equal(o.annotations.length, 1);
      const g = o.annotations[0].geometry;
      assert.ok(Math.abs(g.width - 20) < 1 && Math.abs(g.height - 15) < 1, JSON.stringify(g));
      assert.ok(o.lineage.some((s: { op: string }) => s.op === 'resize'));
    }
    assert.equal((await t.versa.deps.db.selectFrom('versions').selectAll().execute()).length, 0, 'nothing stored');

    assert.equal((await t.client().post(`/api/projects/${projectId}/versions/preview`, body)).status, 401);
    const stranger = await t.user();
    assert.equal((await stranger.post(`/api/projects/${projectId}/versions/preview`, body)).status, 404);
    const viewer = await t.user();
    await alice.post(`/api/projects/${projectId}/members`, { email: viewer.email, role: 'viewer' });
    assert.equal((await viewer.post(`/api/projects/${projectId}/versions/preview`, body)).status, 403);
    assert.equal((await alice.post(`/api/projects/${projectId}/versions/preview`, { ...body, limit: 99 })).status, 422);
    assert.equal((await alice.post(`/api/projects/${projectId}/versions/preview`, { ...body, image_id: 999999 })).status, 422);
    assert.equal((await alice.post(`/api/projects/${projectId}/versions/preview`, { augmentation_config: { outputs_per_image: 0 } })).status, 422);
  });
});
