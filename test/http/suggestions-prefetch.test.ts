import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;
const RED: Square = { x: 20, y: 20, width: 30, height: 30, colour: [255, 0, 0] };

/** Suggestions waiting when an image opens (issue 28): the images ahead in the queue are predicted in the background. */
describe('suggestions prefetch', () => {
  let t: TestApp;
  let alice: User;
  let anna: User;
  let viewer: User;
  let mallory: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // the instance admin sees everything; kept out of the way
    alice = await t.user();
    anna = await t.user();
    viewer = await t.user();
    mallory = await t.user();
  });
  after(() => t.close());

  async function project(imageCount: number, production = true) {
    const projectId = (await alice.post('/api/projects', { name: 'queue' })).body.id as number;
    const classId = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'red' })).body.id as number;
    const files = await Promise.all(Array.from({ length: imageCount }, async (_, i) => ({ filename: `${i}.png`, data: await squaresPng(128, 128, [{ ...RED, x: 10 + i * 5 }]), contentType: 'image/png' })));
    const uploaded = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart(files) });
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    const ids = (uploaded.body.images as { id: number }[]).map((i) => i.id).sort((a, b) => a - b);
    const model = await alice.request({
      method: 'POST',
      url: `/api/projects/${projectId}/models/upload`,
      ...multipart([{ name: 'file', filename: 'colours.onnx', data: Buffer.from(buildYoloModel('v8')) }], { name: `colours ${projectId}` }),
    });
    assert.equal(model.status, 201, JSON.stringify(model.body));
    if (production) assert.equal((await alice.patch(`/api/models/${model.body.id}/lifecycle`, { lifecycle: 'production' })).status, 200);
    return { projectId, classId, ids, modelId: model.body.id as number };
  }
  const prefetch = (client: User, projectId: number, imageIds: number[]) => client.post(`/api/projects/${projectId}/suggestions/prefetch`, { image_ids: imageIds });
  const opened = async (imageId: number) => (await alice.get(`/api/images/${imageId}/annotations`)).body as { status: string; source: string; class_id: number }[];

  it('predicts the images ahead in the background: the next image opens with suggestions, and asking again runs nothing', async () => {
    const { projectId, classId, ids, modelId } = await project(4);
    const [current, next, labelled, later] = ids;
    await alice.post(`/api/images/${labelled}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 30, height: 30 } });
    assert.equal(new Set(ids).size, 4);

    const res = await prefetch(alice, projectId, [next, labelled, later]);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.model_id, modelId);
    assert.deepEqual(res.body.queued, [next, later], 'an image someone labelled is not predicted');
    await t.versa.deps.queue.drain();
    const job = (await alice.get(`/api/jobs/${res.body.job_id}`)).body;
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.result.predicted, 2);

    // Opening the next image is a read: its suggestions are already there.
    const waiting = await opened(next);
    assert.equal(waiting.length, 1);
    assert.deepEqual([waiting[0].status, waiting[0].source, waiting[0].class_id], ['suggested', `model:${modelId}`, classId]);
    assert.equal((await opened(current)).length, 0, 'only the images asked for');
    assert.deepEqual((await opened(labelled)).map((a) => a.status), ['accepted']);

    // Asked again (the annotator moved on): nothing left to predict, no job, no second detector run.
    const again = await prefetch(alice, projectId, [next, labelled, later]);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(again.body, { model_id: modelId, queued: [], job_id: null });
    assert.equal((await opened(next)).length, 1);

    // Suggestions are not annotations until accepted: the project still counts one annotated image.
    const p = (await alice.get(`/api/projects/${projectId}`)).body;
    assert.equal(p.annotated_image_count, 1);
  });

  it("keeps what auto-annotate keeps by default: the model's per-class thresholds from its promotion", async () => {
    const { projectId, ids, modelId } = await project(2);
    // The test detector scores a red square by its red level: 255 is sure, 200 scores 0.78.
    const unsure = await squaresPng(128, 128, [{ ...RED, colour: [200, 0, 0] }]);
    const uploaded = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart([{ filename: 'unsure.png', data: unsure, contentType: 'image/png' }]) });
    const unsureId = uploaded.body.images[0].id as number;
    await t.versa.deps.db.updateTable('models').set({ class_thresholds: JSON.stringify({ red: 0.9 }) }).where('id', '=', modelId).execute();
    assert.equal((await prefetch(alice, projectId, [ids[0], unsureId])).status, 202);
    await t.versa.deps.queue.drain();
    assert.equal((await opened(ids[0])).length, 1);
    assert.equal((await opened(unsureId)).length, 0, 'below the red threshold (0.9), as Run detector would leave it');
  });

  it('runs one job per project at a time', async () => {
    const { projectId, ids } = await project(2);
    const busy = await t.versa.deps.db
      .insertInto('jobs')
      .values({ name: 'suggestions.prefetch', status: 'running', progress: 0, payload: '{}', result: null, error: null, project_id: projectId, created_by: alice.id, created_at: new Date().toISOString(), started_at: null, finished_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await prefetch(alice, projectId, ids);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual([res.body.queued, res.body.job_id], [[], busy.id]);
    await t.versa.deps.db.updateTable('jobs').set({ status: 'succeeded' }).where('id', '=', busy.id).execute();
    assert.equal((await prefetch(alice, projectId, ids)).status, 202);
    await t.versa.deps.queue.drain();
  });

  it('refuses bad input, callers who may not annotate, and projects without a production model', async () => {
    const { projectId, ids } = await project(2);
    const foreign = await prefetch(alice, projectId, [ids[0], 999_999]);
    assert.equal(foreign.status, 422);
    assert.deepEqual(foreign.body.detail[0].loc, ['body', 'image_ids', 1]);
    assert.equal((await prefetch(alice, projectId, [])).status, 422);
    assert.equal((await prefetch(alice, projectId, Array.from({ length: 11 }, (_, i) => i + 1))).status, 422, 'at most 10 images a request');
    assert.equal((await t.client().post(`/api/projects/${projectId}/suggestions/prefetch`, { image_ids: ids })).status, 401);
    assert.equal((await prefetch(mallory, projectId, ids)).status, 404);
    await alice.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' });
    assert.equal((await prefetch(viewer, projectId, ids)).status, 403);

    // An annotator kept to their assignments reaches only their images.
    await alice.patch(`/api/projects/${projectId}`, { assigned_only: true });
    await alice.post(`/api/projects/${projectId}/members`, { user_id: anna.id, role: 'annotator' });
    await alice.post(`/api/projects/${projectId}/assignments`, { user_id: anna.id, image_ids: [ids[0]] });
    assert.equal((await prefetch(anna, projectId, [ids[1]])).status, 422);
    assert.equal((await prefetch(anna, projectId, [ids[0]])).status, 202);
    await t.versa.deps.queue.drain();

    const none = await project(1, false);
    const refused = await prefetch(alice, none.projectId, none.ids);
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /no production model/);
    assert.equal((await opened(none.ids[0])).length, 0);
  });
});
