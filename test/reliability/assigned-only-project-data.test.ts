/**
 * Drill (issue 24, item 1): an annotator of an assigned-only project gets nothing of the images not assigned to them
 * from routes that answer with the whole project. The canonical export is an export (403, as POST …/export is); the
 * quality report, profile and readiness describe every image (403); a version diff names every source image (403);
 * pipeline runs read and report on the whole project (403 to start, read or cancel one); the assignment list holds
 * only their own assignments, as the image list holds only their images. The owner reads all of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('assigned-only annotators: routes that return the whole project', { timeout: 120_000 }, () => {
  let t: TestApp;
  let owner: User;
  let ann: User;
  let other: User;
  let projectId: number;
  let mine: number;
  let theirs: number;
  let versions: number[];
  let pipelineId: number;
  let runId: number;

  before(async () => {
    t = await startTestApp();
    await t.user();
    owner = await t.user();
    ann = await t.user();
    other = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'assigned', assigned_only: true })).body.id;
    for (const user of [ann, other]) assert.equal((await owner.post(`/api/projects/${projectId}/members`, { user_id: user.id, role: 'annotator' })).status, 201);
    const cls = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id;
    mine = await insertImageRow(t, projectId);
    theirs = await insertImageRow(t, projectId);
    for (const image of [mine, theirs]) {
      const made = await owner.post(`/api/images/${image}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } });
      assert.equal(made.status, 201);
    }
    assert.equal((await owner.post(`/api/projects/${projectId}/assignments`, { user_id: ann.id, image_ids: [mine] })).status, 201);
    assert.equal((await owner.post(`/api/projects/${projectId}/assignments`, { user_id: other.id, image_ids: [theirs] })).status, 201);
    versions = [];
    for (const name of ['v1', 'v2']) versions.push((await owner.post(`/api/projects/${projectId}/versions`, { name })).body.id);
    const definition = { name: 'list', steps: [{ id: 'select', type: 'select_images', params: {} }, { id: 'report', type: 'report', needs: ['select'], params: {} }] };
    pipelineId = (await owner.post('/api/pipelines', { project_id: projectId, definition })).body.id;
    const run = await owner.post(`/api/pipelines/${pipelineId}/run`, {});
    assert.equal(run.status, 202, JSON.stringify(run.body));
    runId = run.body.id;
    await t.versa.deps.queue.drain();
  });
  after(() => t.close());

  it('the canonical export: 403 in both formats, as POST …/export; the owner gets every image', async () => {
    for (const format of ['jsonl', 'json']) {
      const res = await ann.get(`/api/projects/${projectId}/canonical?format=${format}`);
      assert.equal(res.status, 403, `${format}: ${JSON.stringify(res.body).slice(0, 200)}`);
      assert.match(res.body.detail, /assigned to them/);
    }
    assert.equal((await ann.post(`/api/projects/${projectId}/export`, { format: 'coco' })).status, 403);
    const all = await owner.get(`/api/projects/${projectId}/canonical?format=json`);
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.map((r: { id: string }) => r.id).sort(), [`image:${mine}`, `image:${theirs}`].sort());
  });

  it('the quality report, the profile and readiness: 403; the owner reads them', async () => {
    const reads = [
      (c: User) => c.get(`/api/projects/${projectId}/quality`),
      (c: User) => c.post(`/api/projects/${projectId}/quality`, { checks: ['unannotated_images'] }),
      (c: User) => c.get(`/api/projects/${projectId}/profile`),
      (c: User) => c.post(`/api/projects/${projectId}/readiness`, {}),
    ];
    for (const read of reads) {
      assert.equal((await read(ann)).status, 403);
      assert.equal((await read(owner)).status, 200);
    }
  });

  it('a version diff names every source image: 403', async () => {
    const url = `/api/projects/${projectId}/versions/${versions[0]}/diff/${versions[1]}`;
    assert.equal((await ann.get(url)).status, 403);
    assert.equal((await owner.get(url)).status, 200);
  });

  it('pipeline runs: 403 to start, list, read or cancel one; the owner reads the run', async () => {
    assert.equal((await ann.post(`/api/pipelines/${pipelineId}/run`, {})).status, 403);
    assert.equal((await ann.get(`/api/pipelines/${pipelineId}/runs`)).status, 403);
    assert.equal((await ann.get(`/api/pipeline-runs/${runId}`)).status, 403);
    assert.equal((await ann.post(`/api/pipeline-runs/${runId}/cancel`, {})).status, 403);
    const run = await owner.get(`/api/pipeline-runs/${runId}`);
    assert.equal(run.status, 200);
    assert.equal(run.body.status, 'succeeded', JSON.stringify(run.body));
    assert.equal((await owner.get(`/api/pipelines/${pipelineId}/runs`)).body.length, 1);
  });

  it('the assignment list holds only their own assignments, whoever they ask about', async () => {
    const listed = await ann.get(`/api/projects/${projectId}/assignments`);
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.map((a: { image_id: number }) => a.image_id), [mine]);
    assert.deepEqual((await ann.get(`/api/projects/${projectId}/assignments?user_id=${other.id}`)).body, []);
    assert.deepEqual((await owner.get(`/api/projects/${projectId}/assignments`)).body.map((a: { image_id: number }) => a.image_id).sort(), [mine, theirs].sort());
  });
});
