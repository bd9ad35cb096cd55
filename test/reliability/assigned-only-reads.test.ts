/**
 * Drill (issue 11, Medium 6): an annotator of an assigned-only project reads only the images assigned to them, on
 * every read path: image bytes by file name, annotation list and single annotation of an unassigned image are 404
 * (the image does not exist for them); version outputs and exports, which hold the whole project, are 403. Their
 * assigned image stays readable, and the owner reads everything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('assigned-only annotators: every read path', { timeout: 120_000 }, () => {
  let t: TestApp;
  let owner: User;
  let ann: User;
  let projectId: number;
  let mine: { id: number; filename: string };
  let other: { id: number; filename: string };
  let otherAnnotation: number;
  let versionId: number;
  let versionImage: number;
  let exportUrl: string;

  before(async () => {
    t = await startTestApp();
    await t.user();
    owner = await t.user();
    ann = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'assigned', assigned_only: true })).body.id;
    assert.equal((await owner.post(`/api/projects/${projectId}/members`, { user_id: ann.id, role: 'annotator' })).status, 201);
    const cls = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id;
    const pngs = await Promise.all([10, 20].map((g) => sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 1, g, b: 3 } } }).png().toBuffer()));
    const uploaded = await owner.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart(pngs.map((data, i) => ({ filename: `i${i}.png`, data, contentType: 'image/png' }))) });
    assert.equal(uploaded.status, 201);
    [mine, other] = uploaded.body.images;
    for (const image of [mine, other]) {
      const made = await owner.post(`/api/images/${image.id}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } });
      assert.equal(made.status, 201);
      if (image === other) otherAnnotation = made.body.id;
    }
    assert.equal((await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [mine.id] })).status, 201);
    const version = await owner.post(`/api/projects/${projectId}/versions`, { name: 'v1' });
    versionId = version.body.id;
    await t.versa.deps.queue.drain();
    versionImage = (await owner.get(`/api/projects/${projectId}/versions/${versionId}/images`)).body[0].id;
    exportUrl = (await owner.post(`/api/projects/${projectId}/export`, { format: 'coco' })).body.url;
  });
  after(() => t.close());

  it('image bytes by file name: the assigned image 200, an unassigned one 404', async () => {
    assert.equal((await ann.get(`/api/projects/${projectId}/images/file/${mine.filename}`)).status, 200);
    assert.equal((await ann.get(`/api/projects/${projectId}/images/file/${other.filename}`)).status, 404);
    assert.equal((await owner.get(`/api/projects/${projectId}/images/file/${other.filename}`)).status, 200);
  });

  it('annotations of an unassigned image: list and single are 404', async () => {
    assert.equal((await ann.get(`/api/images/${mine.id}/annotations`)).status, 200);
    assert.equal((await ann.get(`/api/images/${other.id}/annotations`)).status, 404);
    assert.equal((await ann.get(`/api/annotations/${otherAnnotation}`)).status, 404);
    assert.equal((await owner.get(`/api/annotations/${otherAnnotation}`)).status, 200);
  });

  it('version outputs and exports hold the whole project: 403', async () => {
    assert.equal((await ann.get(`/api/projects/${projectId}/versions/${versionId}/images`)).status, 403);
    assert.equal((await ann.get(`/api/projects/${projectId}/versions/${versionId}/images/${versionImage}/file`)).status, 403);
    assert.equal((await ann.post(`/api/projects/${projectId}/export`, { format: 'coco' })).status, 403);
    assert.equal((await ann.get(exportUrl)).status, 403);
    assert.equal((await owner.get(exportUrl)).status, 200);
    assert.equal((await owner.get(`/api/projects/${projectId}/versions/${versionId}/images/${versionImage}/file`)).status, 200);
  });
});
