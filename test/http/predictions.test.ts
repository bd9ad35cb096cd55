import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { insertImageRow } from '../helpers/image-rows.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const RED: Square = { x: 30, y: 40, width: 36, height: 30, colour: [255, 0, 0] };
const GREEN: Square = { x: 120, y: 20, width: 50, height: 70, colour: [0, 204, 0] };
const box = (x = 10, y = 20, width = 30, height = 40) => ({ x, y, width, height });

describe('predictions (suggested annotations)', () => {
  let t: TestApp;
  let alice: User;
  let mallory: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // instance admin, kept out of the way
    alice = await t.user();
    mallory = await t.user();
  });
  after(() => t.close());

  async function setup() {
    const projectId = (await alice.post('/api/projects', { name: 'p' })).body.id as number;
    const car = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id as number;
    const imageId = await insertImageRow(t, projectId);
    return { projectId, car, imageId };
  }
  const suggest = async (imageId: number, classId: number, geometry = box(), source = 'model:1') => {
    const res = await alice.post(`/api/images/${imageId}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry, confidence: 0.8, source, status: 'suggested' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.status, 'suggested');
    return res.body as { id: number };
  };
  const rows = (imageId: number) => t.versa.deps.db.selectFrom('annotations').selectAll().where('image_id', '=', imageId).orderBy('id').execute();
  const imageCount = async (imageId: number) =>
    Number((await t.versa.deps.db.selectFrom('images').select('annotation_count').where('id', '=', imageId).executeTakeFirstOrThrow()).annotation_count);

  it('a manual annotation is accepted; a suggestion is accepted one by one with an update revision', async () => {
    const { car, imageId } = await setup();
    const manual = await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() });
    assert.equal(manual.body.status, 'accepted');
    const s = await suggest(imageId, car, box(100, 100));
    const accepted = await alice.post(`/api/annotations/${s.id}/accept`);
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal(accepted.body.status, 'accepted');
    assert.equal(accepted.body.source, 'model:1', 'an accepted prediction keeps its source: reviews see it came from a model');
    assert.equal((await rows(imageId)).find((r) => r.id === s.id)!.status, 'accepted');
    const revisions = (await alice.get(`/api/annotations/${s.id}/revisions`)).body as { action: string; before: { status?: string } | null; after: { status?: string } | null; user_id: number }[];
    const update = revisions.find((r) => r.action === 'update')!;
    assert.equal(update.before!.status, 'suggested');
    assert.equal(update.after!.status, 'accepted');
    assert.equal(update.user_id, alice.id);
    // Accepting twice, or rejecting an accepted annotation, is a conflict and changes nothing.
    assert.equal((await alice.post(`/api/annotations/${s.id}/accept`)).status, 409);
    assert.equal((await alice.post(`/api/annotations/${manual.body.id}/reject`)).status, 409);
    assert.equal((await rows(imageId)).length, 2);
  });

  it('rejecting deletes the suggestion with a delete revision and moves the counters; revert brings it back', async () => {
    const { car, imageId } = await setup();
    const s = await suggest(imageId, car);
    assert.equal(await imageCount(imageId), 0, 'a suggestion is not counted');
    const res = await alice.post(`/api/annotations/${s.id}/reject`);
    assert.equal(res.status, 204);
    assert.equal((await rows(imageId)).length, 0);
    assert.equal(await imageCount(imageId), 0);
    const revisions = (await alice.get(`/api/annotations/${s.id}/revisions`)).body as { id: number; action: string }[];
    assert.deepEqual(revisions.map((r) => r.action).sort(), ['create', 'delete']);
    const create = revisions.find((r) => r.action === 'create')!;
    assert.ok([200, 201].includes((await alice.post(`/api/annotations/${s.id}/revert`, { revision_id: create.id })).status));
    const back = await rows(imageId);
    assert.equal(back.length, 1);
    assert.equal(back[0].status, 'suggested', 'reverting restores the suggestion as a suggestion');
  });

  it('suggestions never count as annotations until accepted: project and instance stats, the annotated filter, class and image deletes', async () => {
    const { projectId, car, imageId } = await setup();
    const counts = async () => {
      const p = (await alice.get(`/api/projects/${projectId}`)).body;
      const stats = (await alice.get('/api/stats')).body;
      const annotated = (await alice.get(`/api/projects/${projectId}/images?annotated=true`)).body as { id: number }[];
      return { annotations: p.annotation_count, images: p.annotated_image_count, stats: [stats.total_annotations, stats.annotated_images], filtered: annotated.map((i) => i.id) };
    };
    const before = await counts();
    const [s1, s2] = [await suggest(imageId, car, box(1, 1)), await suggest(imageId, car, box(100, 100))];
    assert.deepEqual(await counts(), { ...before, annotations: 0, images: 0, filtered: [] }, 'two open suggestions count nothing');

    assert.equal((await alice.post(`/api/annotations/${s1.id}/accept`)).status, 200);
    const accepted = await counts();
    assert.deepEqual([accepted.annotations, accepted.images, accepted.filtered], [1, 1, [imageId]]);
    assert.deepEqual(accepted.stats, [before.stats[0] + 1, before.stats[1] + 1]);
    // The profile (and readiness, which reads it) sees the accepted box only.
    const profile = (await alice.get(`/api/projects/${projectId}/profile`)).body;
    assert.deepEqual([profile.totals.annotations, profile.totals.annotated_images], [1, 1], JSON.stringify(profile.totals));
    assert.deepEqual(profile.classes.map((c: { instances: number }) => c.instances), [1]);
    assert.deepEqual(profile.annotation_types, { bbox: 1 });
    // The editor's undo of an accept makes it a suggestion again: uncounted.
    const undone = await alice.request({ method: 'PUT', url: `/api/annotations/${s1.id}`, payload: { class_id: car, annotation_type: 'bbox', geometry: box(1, 1), source: 'model:1', status: 'suggested' } });
    assert.equal(undone.status, 200, JSON.stringify(undone.body));
    assert.deepEqual((await counts()).annotations, 0);
    await alice.post(`/api/annotations/${s1.id}/accept`);

    // Deleting the image with one accepted annotation and one suggestion takes one annotation off the project.
    const other = await insertImageRow(t, projectId);
    await alice.post(`/api/images/${other}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() });
    await suggest(other, car, box(50, 50));
    assert.equal((await counts()).annotations, 2);
    assert.equal((await alice.delete(`/api/images/${other}`)).status, 204);
    assert.deepEqual([(await counts()).annotations, (await counts()).images], [1, 1]);

    // Deleting the class with its annotations (one accepted, one suggestion) leaves nothing counted.
    assert.equal((await rows(imageId)).find((r) => r.id === s2.id)!.status, 'suggested');
    const removed = await alice.delete(`/api/classes/${car}?cascade=true`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal(removed.body.deleted_annotations, 2);
    assert.deepEqual(await counts(), { ...before, annotations: 0, images: 0, filtered: [] });
  });

  it('accept-all and reject-all take every suggestion of the image, or one source only', async () => {
    const { projectId, car, imageId } = await setup();
    const otherImage = await insertImageRow(t, projectId);
    await suggest(imageId, car, box(1, 1), 'model:1');
    await suggest(imageId, car, box(200, 1), 'model:1');
    await suggest(imageId, car, box(1, 200), 'sam');
    const elsewhere = await suggest(otherImage, car, box(1, 1), 'model:1');
    const some = await alice.post(`/api/images/${imageId}/predictions/accept-all`, { source: 'model:1' });
    assert.equal(some.status, 200, JSON.stringify(some.body));
    assert.equal(some.body.count, 2);
    assert.ok(some.body.annotations.every((a: { status: string }) => a.status === 'accepted'));
    const rest = await alice.post(`/api/images/${imageId}/predictions/reject-all`, {});
    assert.equal(rest.status, 200);
    assert.equal(rest.body.count, 1);
    const left = await rows(imageId);
    assert.deepEqual(left.map((r) => [r.source, r.status]), [['model:1', 'accepted'], ['model:1', 'accepted']]);
    assert.equal(await imageCount(imageId), 2);
    assert.equal((await rows(otherImage)).find((r) => r.id === elsewhere.id)!.status, 'suggested', 'other images are untouched');
    // With nothing left to decide, accept-all answers an empty result.
    const none = await alice.post(`/api/images/${imageId}/predictions/accept-all`, {});
    assert.equal(none.status, 200, JSON.stringify(none.body));
    assert.equal(none.body.count, 0);
  });

  it('401 without credentials, 404 for a foreign project, 422 for bad input; nothing changes', async () => {
    const { car, imageId } = await setup();
    const s = await suggest(imageId, car);
    const anon = t.client();
    assert.equal((await anon.post(`/api/annotations/${s.id}/accept`)).status, 401);
    assert.equal((await anon.post(`/api/annotations/${s.id}/reject`)).status, 401);
    assert.equal((await anon.post(`/api/images/${imageId}/predictions/accept-all`, {})).status, 401);
    assert.equal((await mallory.post(`/api/annotations/${s.id}/accept`)).status, 404);
    assert.equal((await mallory.post(`/api/annotations/${s.id}/reject`)).status, 404);
    assert.equal((await mallory.post(`/api/images/${imageId}/predictions/accept-all`, {})).status, 404);
    assert.equal((await mallory.post(`/api/images/${imageId}/predictions/reject-all`, {})).status, 404);
    assert.equal((await alice.post('/api/annotations/999999/accept')).status, 404);
    assert.equal((await alice.post('/api/annotations/abc/accept')).status, 422);
    const badSource = await alice.post(`/api/images/${imageId}/predictions/accept-all`, { source: '../x' });
    assert.equal(badSource.status, 422);
    assert.deepEqual(badSource.body.detail[0].loc, ['body', 'source']);
    assert.equal((await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box(), status: 'maybe' })).status, 422);
    const [row] = await rows(imageId);
    assert.equal(row.status, 'suggested');
    assert.equal((await rows(imageId)).length, 1);
  });

  it('a viewer is refused (403) and the suggestion stays', async () => {
    const { projectId, car, imageId } = await setup();
    const s = await suggest(imageId, car);
    const viewer = await t.user();
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { email: viewer.email, role: 'viewer' })).status, 201);
    assert.equal((await viewer.post(`/api/annotations/${s.id}/accept`)).status, 403);
    assert.equal((await viewer.post(`/api/images/${imageId}/predictions/reject-all`, {})).status, 403);
    assert.equal((await rows(imageId))[0].status, 'suggested');
  });

  it('exports leave suggestions out unless include_predictions is true', async () => {
    const { projectId, car, imageId } = await setup();
    await alice.post(`/api/images/${imageId}/annotations`, { class_id: car, annotation_type: 'bbox', geometry: box() });
    await suggest(imageId, car, box(300, 300));
    const download = async (body: object) => {
      const out = await alice.post(`/api/projects/${projectId}/export`, { format: 'coco', ...body });
      assert.equal(out.status, 200, JSON.stringify(out.body));
      const file = await alice.get(out.body.url);
      return { count: out.body.annotation_count as number, doc: JSON.parse(file.raw.toString('utf8')) };
    };
    const plain = await download({});
    assert.equal(plain.count, 1);
    assert.deepEqual(plain.doc.annotations.map((a: { bbox: number[] }) => a.bbox), [[10, 20, 30, 40]]);
    const all = await download({ include_predictions: true });
    assert.equal(all.count, 2);
    assert.equal((await alice.post(`/api/projects/${projectId}/export`, { format: 'coco', include_predictions: 'yes' })).status, 422);
  });

  describe('detector re-runs', () => {
    const uploadModel = async (projectId: number) => {
      const res = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'det.onnx', data: Buffer.from(buildYoloModel('v8')) }]) });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as number;
    };

    it('three runs never stack copies: a re-run replaces open suggestions, and skips what was accepted', async () => {
      const projectId = (await alice.post('/api/projects', { name: 'rerun' })).body.id as number;
      const model = await uploadModel(projectId);
      const upload = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart([{ filename: 'a.png', data: await squaresPng(200, 120, [RED, GREEN]), contentType: 'image/png' }]) });
      const imageId = upload.body.images[0].id as number;
      const run = () => alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model, confidence: 0.25, iou: 0.5 });

      const first = await run();
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.created, 2);
      assert.ok(first.body.images[0].annotations.every((a: { status: string }) => a.status === 'suggested'));
      const afterFirst = await rows(imageId);
      assert.deepEqual(afterFirst.map((r) => r.status), ['suggested', 'suggested']);

      const second = await run();
      assert.equal(second.body.created, 2);
      assert.equal(second.body.replaced, 2);
      const afterSecond = await rows(imageId);
      assert.equal(afterSecond.length, 2, 'the second run replaced the first run\'s suggestions instead of stacking');
      assert.deepEqual(afterSecond.map((r) => JSON.parse(r.geometry)), afterFirst.map((r) => JSON.parse(r.geometry)));
      assert.equal(await imageCount(imageId), 0, 'suggestions are not counted');

      // The person accepts one box; the third run adds nothing on top of it and replaces the other suggestion.
      assert.equal((await alice.post(`/api/annotations/${afterSecond[0].id}/accept`)).status, 200);
      const third = await run();
      assert.equal(third.body.matched, 1);
      assert.equal(third.body.replaced, 1);
      assert.equal(third.body.created, 1);
      const afterThird = await rows(imageId);
      assert.equal(afterThird.length, 2, 'three runs leave one shape per object');
      assert.deepEqual(afterThird.map((r) => r.status).sort(), ['accepted', 'suggested']);
      const project = (await alice.get(`/api/projects/${projectId}`)).body;
      assert.equal(project.annotation_count, 1, 'the project counts the accepted annotation, not the suggestion');
    });
  });
});
