import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;
interface Listed {
  id: number;
  project_id: number;
  lifecycle: string;
  shared?: { project_id: number; project_name: string; matched: string[]; unmatched: string[] };
}

/** A promoted model serves the other projects of its owner or organization (issue 28, models across projects). */
describe('models across projects', () => {
  let t: TestApp;
  let alice: User;
  let bob: User;
  let dave: User;
  let mallory: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // the instance admin sees everything; kept out of the way
    alice = await t.user();
    bob = await t.user();
    dave = await t.user();
    mallory = await t.user();
  });
  after(() => t.close());

  const project = async (owner: User, name: string, classes: string[], orgId?: number) => {
    const id = (await owner.post('/api/projects', { name, ...(orgId ? { org_id: orgId } : {}) })).body.id as number;
    for (const c of classes) assert.equal((await owner.post(`/api/projects/${id}/classes`, { name: c })).status, 201);
    return id;
  };
  const model = async (owner: User, projectId: number, lifecycle: string, size = 128) => {
    const res = await owner.request({
      method: 'POST',
      url: `/api/projects/${projectId}/models/upload`,
      ...multipart([{ name: 'file', filename: 'colours.onnx', data: Buffer.from(buildYoloModel('v8', { width: size, height: size })) }], { name: `colours ${projectId} ${lifecycle}` }),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    if (lifecycle !== 'development') assert.equal((await owner.patch(`/api/models/${res.body.id}/lifecycle`, { lifecycle })).status, 200);
    return res.body.id as number;
  };
  const listed = async (client: User, projectId: number, query = '?include_shared=true') => {
    const res = await client.get(`/api/projects/${projectId}/models${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Listed[];
  };

  it("lists the owner's promoted models of other projects, marked shared with the class match; auto-annotate uses one, classes mapped by name", async () => {
    const source = await project(alice, 'first batch', ['red', 'green']);
    const promoted = await model(alice, source, 'production');
    await model(alice, source, 'staging', 96);
    const target = await project(alice, 'new batch', [' RED ']);
    const own = await model(alice, target, 'development');
    const othersProject = await project(mallory, 'mallory', ['red']);
    await model(mallory, othersProject, 'production');

    assert.deepEqual((await listed(alice, target, '')).map((m) => m.id), [own], 'without the flag: only the project\'s own models');
    const all = await listed(alice, target);
    assert.deepEqual(all.map((m) => m.id), [own, promoted], 'staging models and other owners\' models are not shared');
    assert.equal(all[0].shared, undefined);
    assert.deepEqual(all[1].shared, { project_id: source, project_name: 'first batch', matched: ['red'], unmatched: ['green'] });

    const image = await squaresPng(128, 128, [{ x: 20, y: 20, width: 30, height: 30, colour: [255, 0, 0] }, { x: 70, y: 70, width: 30, height: 30, colour: [0, 255, 0] }]);
    const uploaded = await alice.request({ method: 'POST', url: `/api/projects/${target}/images`, ...multipart([{ filename: 'a.png', data: image, contentType: 'image/png' }]) });
    const imageId = uploaded.body.images[0].id as number;
    const run = await alice.post(`/api/projects/${target}/auto-annotate/yolo`, { model: promoted, image_ids: [imageId], create_missing_classes: false });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(run.body.created, 1, 'the red square, as this project\'s "RED" class');
    assert.equal(run.body.skipped, 1, 'green is not a class here: skipped');
    const red = (await alice.get(`/api/projects/${target}/classes`)).body.find((c: { name: string }) => c.name.trim() === 'RED').id;
    assert.equal(run.body.images[0].annotations[0].class_id, red);
    assert.equal(run.body.images[0].annotations[0].source, `model:${promoted}`);
  });

  it("lists an organization's promoted models only to callers who can read their project; auto-annotate answers 404 for a model the caller cannot read", async () => {
    const orgId = (await bob.post('/api/orgs', { name: 'lab' })).body.id as number;
    assert.equal((await bob.post(`/api/orgs/${orgId}/members`, { user_id: alice.id, role: 'admin' })).status, 201);
    const bobs = await project(bob, 'org source', ['red'], orgId);
    const promoted = await model(bob, bobs, 'production');
    const target = await project(alice, 'org target', ['red'], orgId);
    const outside = await project(alice, 'outside the org', ['red']);
    assert.ok((await listed(alice, target)).some((m) => m.id === promoted && m.shared?.project_id === bobs), 'same organization');
    assert.ok(!(await listed(alice, outside)).some((m) => m.id === promoted), 'a project outside the organization, of another owner');

    // Dave annotates the target but cannot read bob's project: its model is not listed to him, nor usable.
    assert.equal((await alice.post(`/api/projects/${target}/members`, { user_id: dave.id, role: 'annotator' })).status, 201);
    assert.ok(!(await listed(dave, target)).some((m) => m.id === promoted));
    const refused = await dave.post(`/api/projects/${target}/auto-annotate/yolo`, { model: promoted });
    assert.equal(refused.status, 404, JSON.stringify(refused.body));
    assert.match(refused.body.detail, /not found/);
    const mallorys = await project(mallory, 'elsewhere', ['red']);
    assert.equal((await mallory.post(`/api/projects/${mallorys}/auto-annotate/yolo`, { model: promoted })).status, 404);
    assert.equal((await mallory.post(`/api/projects/${mallorys}/auto-annotate/yolo`, { model: 999_999 })).status, 404);
    assert.equal((await mallory.get(`/api/projects/${target}/models?include_shared=true`)).status, 404);
    assert.equal((await alice.get(`/api/projects/${target}/models?include_shared=maybe`)).status, 422);
  });
});
