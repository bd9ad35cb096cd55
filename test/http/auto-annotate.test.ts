import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeRle } from '../../src/imaging/rle.js';
import { multipart } from '../helpers/multipart.js';
import { buildSamDecoder, buildSamEncoder, SAM_TEST_SCORES } from '../helpers/onnx/sam-models.js';
import { exifRotatedJpeg, squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;
type Box = { x: number; y: number; width: number; height: number };

const RED: Square = { x: 30, y: 40, width: 36, height: 30, colour: [255, 0, 0] };
const GREEN: Square = { x: 120, y: 20, width: 50, height: 70, colour: [0, 204, 0] };

function assertBox(actual: Box, expected: Box, tolerance = 2): void {
  for (const k of ['x', 'y', 'width', 'height'] as const) {
    assert.ok(Math.abs(actual[k] - expected[k]) <= tolerance, `${k}: ${actual[k]} vs ${expected[k]} (${JSON.stringify(actual)})`);
  }
}

function bounds(points: [number, number][]): Box {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

describe('auto-annotate', () => {
  let t: TestApp;
  let alice: User;
  let mallory: User;
  before(async () => {
    t = await startTestApp();
    await t.user(); // the first account is instance admin and sees everything; keep it out of the way
    alice = await t.user();
    mallory = await t.user();
  });
  after(() => t.close());

  const project = async () => (await alice.post('/api/projects', { name: 'p' })).body.id as number;
  const uploadModel = async (projectId: number, data: Uint8Array, filename: string, fields: Record<string, string> = {}) => {
    const res = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename, data: Buffer.from(data) }], fields) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: number; name: string };
  };
  const uploadImages = async (projectId: number, images: Buffer[]) => {
    const res = await alice.request({
      method: 'POST',
      url: `/api/projects/${projectId}/images`,
      ...multipart(images.map((data, i) => ({ filename: `img${i}.png`, data, contentType: 'image/png' }))),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return (res.body.images as { id: number }[]).map((i) => i.id);
  };
  const counters = async (projectId: number) => {
    const p = (await alice.get(`/api/projects/${projectId}`)).body;
    return { annotations: p.annotation_count, annotated: p.annotated_image_count, classes: p.class_count };
  };
  const annotationRows = async (projectId: number) =>
    t.versa.deps.db.selectFrom('annotations').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  /** Images that differ in bytes (the upload deduplicates identical files). */
  const squareImages = (count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => squaresPng(200, 120, [{ ...RED, x: RED.x + i }, GREEN])));

  it('runs a detector inline and creates boxes on the squares, in original pixels, with classes made by name', async () => {
    const projectId = await project();
    const model = await uploadModel(projectId, buildYoloModel('v8'), 'det.onnx');
    const upright: Square = { x: 20, y: 110, width: 40, height: 50, colour: [255, 0, 0] };
    const [plain, rotated] = await uploadImages(projectId, [await squaresPng(200, 120, [RED, GREEN]), await exifRotatedJpeg(120, 200, [upright])]);
    const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: model.id, confidence: 0.25, iou: 0.5 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.created, 3);
    assert.deepEqual(res.body.classes_created.sort(), ['green', 'red']);
    const classes = (await alice.get(`/api/projects/${projectId}/classes`)).body as { id: number; name: string }[];
    const classId = (name: string) => classes.find((c) => c.name === name)!.id;
    const [first, second] = res.body.images;
    assert.equal(first.image_id, plain);
    const red = first.annotations.find((a: { class_id: number }) => a.class_id === classId('red'));
    const green = first.annotations.find((a: { class_id: number }) => a.class_id === classId('green'));
    assert.equal(red.annotation_type, 'bbox');
    assertBox(red.geometry, RED);
    assertBox(green.geometry, GREEN);
    assert.equal(red.source, `model:${model.id}`);
    assert.ok(Math.abs(red.confidence - 1) < 0.01);
    assert.equal(second.image_id, rotated);
    assert.equal(second.annotations.length, 1);
    assertBox(second.annotations[0].geometry, upright);

    const stored = await alice.get(`/api/images/${plain}/annotations`);
    assert.deepEqual(stored.body.map((a: { id: number }) => a.id).sort(), first.annotations.map((a: { id: number }) => a.id).sort());
    // Suggestions are not annotations until accepted: only the classes count.
    assert.deepEqual(await counters(projectId), { annotations: 0, annotated: 0, classes: 2 });

    // By name, only on unannotated images: open suggestions do not make an image annotated, so the run replaces them.
    const again = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: 'det', confidence: 0.25, iou: 0.5, only_unannotated: true });
    assert.equal(again.status, 200);
    assert.deepEqual([again.body.created, again.body.replaced], [3, 3]);
    // Once one is accepted, its image is annotated and skipped.
    assert.equal((await alice.post(`/api/annotations/${again.body.images[0].annotations[0].id}/accept`)).status, 200);
    const third = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: 'det', confidence: 0.25, iou: 0.5, only_unannotated: true });
    assert.deepEqual(third.body.images.map((i: { image_id: number }) => i.image_id), [rotated]);
    assert.equal((await annotationRows(projectId)).length, 3);
  });

  it('maps to existing classes case-insensitively and skips unknown ones when told not to create classes', async () => {
    const projectId = await project();
    const model = await uploadModel(projectId, buildYoloModel('v5'), 'v5.onnx');
    const redClass = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'Red' })).body.id;
    const [image] = await uploadImages(projectId, [await squaresPng(200, 120, [RED, GREEN])]);
    const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, {
      model: model.id, confidence: 0.25, iou: 0.5, image_ids: [image], create_missing_classes: false,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.created, 1);
    assert.equal(res.body.skipped, 1);
    assert.deepEqual(res.body.classes_created, []);
    assert.equal(res.body.images[0].annotations[0].class_id, redClass);
    assert.deepEqual(await counters(projectId), { annotations: 0, annotated: 0, classes: 1 });
  });

  it('turns segmentation output into polygon annotations', async () => {
    const projectId = await project();
    const model = await uploadModel(projectId, buildYoloModel('v8-seg'), 'seg.onnx');
    await uploadImages(projectId, [await squaresPng(200, 120, [RED, GREEN])]);
    const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: model.id, confidence: 0.25, iou: 0.5 });
    assert.equal(res.status, 200);
    const annotations = res.body.images[0].annotations as { annotation_type: string; geometry: { points: [number, number][] } }[];
    assert.equal(annotations.length, 2);
    assert.ok(annotations.every((a) => a.annotation_type === 'polygon'));
    const boxes = annotations.map((a) => bounds(a.geometry.points)).sort((a, b) => a.x - b.x);
    assertBox(boxes[0], RED);
    assertBox(boxes[1], GREEN);
  });

  it('runs many images as a background job with progress and a result', async () => {
    const projectId = await project();
    const model = await uploadModel(projectId, buildYoloModel('end2end'), 'e2e.onnx');
    const ids = await uploadImages(projectId, await squareImages(10));
    const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: 'e2e', confidence: 0.25, iou: 0.5 });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.image_count, 10);
    assert.equal(res.body.url, `/api/jobs/${res.body.job_id}`);
    await t.versa.deps.queue.drain();
    const job = await alice.get(`/api/jobs/${res.body.job_id}`);
    assert.equal(job.status, 200);
    assert.equal(job.body.status, 'succeeded', JSON.stringify(job.body));
    assert.equal(job.body.progress, 1);
    assert.equal(job.body.result.created, 20);
    assert.deepEqual(job.body.result.failed, []);
    assert.deepEqual(await counters(projectId), { annotations: 0, annotated: 0, classes: 2 });
    const rows = await annotationRows(projectId);
    assert.deepEqual([...new Set(rows.map((r) => r.image_id))].sort((a, b) => a - b), ids.sort((a, b) => a - b));
    const first = rows.find((r) => r.image_id === Math.min(...ids) && JSON.parse(r.geometry).x < 100)!;
    assertBox(JSON.parse(first.geometry), RED);
    assert.equal((await mallory.get(`/api/jobs/${res.body.job_id}`)).status, 404);
  });

  it('refuses unusable models and bad requests with nothing created', async () => {
    const projectId = await project();
    const [image] = await uploadImages(projectId, [await squaresPng(200, 120, [RED])]);
    const pt = await uploadModel(projectId, Buffer.from('pickled'), 'best.pt');
    const encoder = await uploadModel(projectId, buildSamEncoder(), 'enc.onnx');
    const det = await uploadModel(projectId, buildYoloModel('v8'), 'det.onnx');
    const url = `/api/projects/${projectId}/auto-annotate/yolo`;
    const ptRes = await alice.post(url, { model: pt.id, confidence: 0.25, iou: 0.5 });
    assert.equal(ptRes.status, 422);
    assert.match(ptRes.body.detail, /export it to ONNX/);
    assert.equal((await alice.post(url, { model: encoder.id, confidence: 0.25, iou: 0.5 })).status, 422);
    assert.equal((await alice.post(url, { model: 'nope', confidence: 0.25, iou: 0.5 })).status, 422);
    // A model id nobody can read is not found, as a model of a project the caller cannot see.
    assert.equal((await alice.post(url, { model: 999_999, confidence: 0.25, iou: 0.5 })).status, 404);
    const foreign = await alice.post(url, { model: det.id, confidence: 0.25, iou: 0.5, image_ids: [image, 999_999] });
    assert.equal(foreign.status, 422);
    assert.deepEqual(foreign.body.detail[0].loc, ['body', 'image_ids', 1]);
    assert.equal((await alice.post(url, { model: det.id, confidence: 2, iou: 0.5 })).status, 422);
    assert.equal((await alice.post(url, { confidence: 0.25 })).status, 422);
    assert.equal((await mallory.post(url, { model: det.id, confidence: 0.25, iou: 0.5 })).status, 404);
    // Another user's model cannot be named by id from their own project.
    const malloryProject = (await mallory.post('/api/projects', { name: 'm' })).body.id;
    assert.equal((await mallory.post(`/api/projects/${malloryProject}/auto-annotate/yolo`, { model: det.id, confidence: 0.25, iou: 0.5 })).status, 404);
    assert.equal((await alice.post('/api/projects/999999/auto-annotate/yolo', { model: det.id, confidence: 0.25, iou: 0.5 })).status, 404);
    assert.equal((await t.client().post(url, { model: det.id, confidence: 0.25, iou: 0.5 })).status, 401);
    assert.deepEqual(await annotationRows(projectId), []);
    assert.deepEqual(await counters(projectId), { annotations: 0, annotated: 0, classes: 0 });
  });

  describe('SAM', () => {
    const red: Square = { x: 32, y: 40, width: 36, height: 28, colour: [255, 0, 0] };
    const green: Square = { x: 120, y: 20, width: 52, height: 72, colour: [0, 200, 0] };
    let projectId: number;
    let imageId: number;
    let classId: number;
    before(async () => {
      projectId = await project();
      await uploadModel(projectId, buildSamEncoder(), 'sam_encoder.onnx');
      await uploadModel(projectId, buildSamDecoder(), 'sam_decoder.onnx');
      [imageId] = await uploadImages(projectId, [await squaresPng(256, 160, [red, green])]);
      classId = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'thing' })).body.id;
    });
    const url = () => `/api/projects/${projectId}/auto-annotate/sam`;

    it('previews a mask from a click without saving, then reuses the cached embedding', async () => {
      const first = await alice.post(url(), { image_id: imageId, points: [[50, 55]], labels: [1], preview: true });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.annotation, null);
      assert.equal(first.body.embedding_cached, false);
      assertBox(first.body.mask.bbox, red, 1);
      assert.ok(Math.abs(first.body.mask.score - SAM_TEST_SCORES[1]) < 1e-6);
      assert.deepEqual(first.body.mask.rle.size, [160, 256]);
      assert.equal(decodeRle(first.body.mask.rle).data[55 * 256 + 50], 1);
      assertBox(bounds(first.body.mask.polygons[0]), red, 1);
      assert.deepEqual(await annotationRows(projectId), []);
      const embeddings = await readdir(join(t.dataDir, 'embeddings'));
      assert.equal(embeddings.length, 1);

      const second = await alice.post(url(), { image_id: imageId, points: [[140, 60], [5, 5]], labels: [1, 0], preview: true });
      assert.equal(second.body.embedding_cached, true);
      assertBox(second.body.mask.bbox, green, 1);
    });

    it('saves a polygon annotation by default, or an RLE mask', async () => {
      const polygon = await alice.post(url(), { image_id: imageId, class_id: classId, points: [[50, 55]], labels: [1] });
      assert.equal(polygon.status, 201, JSON.stringify(polygon.body));
      const a = polygon.body.annotation;
      assert.equal(a.annotation_type, 'polygon');
      assert.equal(a.source, 'sam');
      assert.equal(a.class_id, classId);
      assert.ok(Math.abs(a.confidence - SAM_TEST_SCORES[1]) < 1e-6);
      assertBox(bounds(a.geometry.points), red, 1);
      const mask = await alice.post(url(), { image_id: imageId, class_id: classId, points: [[140, 60]], labels: [1], annotation_type: 'mask' });
      assert.equal(mask.status, 201);
      assert.equal(mask.body.annotation.annotation_type, 'mask');
      assertBox(mask.body.annotation.geometry.bbox, green, 1);
      const listed = await alice.get(`/api/images/${imageId}/annotations`);
      assert.equal(listed.body.length, 2);
      assert.deepEqual(await counters(projectId), { annotations: 0, annotated: 0, classes: 1 }, 'SAM shapes are suggestions until accepted');
    });

    it('validates clicks, classes and models, and changes nothing when refusing', async () => {
      const before = (await annotationRows(projectId)).length;
      const bad = async (body: object, status = 422) => {
        const res = await alice.post(url(), body);
        assert.equal(res.status, status, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
        return res;
      };
      await bad({ image_id: imageId, points: [[50, 55]], labels: [1] }); // no class_id without preview
      await bad({ image_id: imageId, class_id: classId, points: [[50, 55]], labels: [1, 0] });
      await bad({ image_id: imageId, class_id: classId, points: [[500, 55]], labels: [1] });
      await bad({ image_id: imageId, class_id: classId, points: [[50]], labels: [1] });
      await bad({ image_id: imageId, class_id: classId, points: [[50, 55]], labels: [2] });
      await bad({ image_id: imageId, class_id: 999_999, points: [[50, 55]], labels: [1] });
      await bad({ image_id: imageId, class_id: classId, points: [[50, 55]], labels: [1], encoder_model: 'sam_decoder' });
      await bad({ image_id: 999_999, class_id: classId, points: [[50, 55]], labels: [1] }, 404);
      assert.equal((await mallory.post(url(), { image_id: imageId, points: [[50, 55]], labels: [1], preview: true })).status, 404);
      assert.equal((await t.client().post(url(), { image_id: imageId, points: [[50, 55]], labels: [1], preview: true })).status, 401);
      const other = await project();
      const noModels = await alice.post(`/api/projects/${other}/auto-annotate/sam`, { image_id: imageId, points: [[50, 55]], labels: [1], preview: true });
      assert.equal(noModels.status, 404); // the image is not in that project
      assert.equal((await annotationRows(projectId)).length, before);
    });

    it('precomputes embeddings for every image as a job', async () => {
      await uploadImages(projectId, [await squaresPng(256, 160, [green])]);
      const res = await alice.post(`${url()}/precompute`, {});
      assert.equal(res.status, 202, JSON.stringify(res.body));
      await t.versa.deps.queue.drain();
      const job = (await alice.get(`/api/jobs/${res.body.job_id}`)).body;
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.deepEqual(job.result, { images: 2, computed: 1, cached: 1 });
      assert.equal((await t.client().post(`${url()}/precompute`, {})).status, 401);
      assert.equal((await mallory.post(`${url()}/precompute`, {})).status, 404);
      const empty = await project();
      assert.equal((await alice.post(`/api/projects/${empty}/auto-annotate/sam/precompute`, {})).status, 422);
    });
  });

  describe('as a team: revisions, locks, assignments', () => {
    let bob: User;
    before(async () => {
      bob = await t.user();
    });
    const revisionsOf = async (projectId: number) =>
      t.versa.deps.db.selectFrom('revisions').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
    const teamProject = async (options: object = {}) => {
      const projectId = (await alice.post('/api/projects', { name: 'team', ...options })).body.id as number;
      assert.equal((await alice.post(`/api/projects/${projectId}/members`, { user_id: bob.id, role: 'annotator' })).status, 201);
      return projectId;
    };

    it('writes a create revision by the caller for every annotation, and skips and reports images locked by others (inline)', async () => {
      const projectId = await teamProject();
      const model = await uploadModel(projectId, buildYoloModel('v8'), 'det.onnx');
      const [free, held, own] = await uploadImages(projectId, await squareImages(3));
      const lock = await bob.post(`/api/images/${held}/lock`);
      assert.equal(lock.status, 200);
      assert.equal((await alice.post(`/api/images/${own}/lock`)).status, 200); // the caller's own lock does not stop them
      const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: model.id, confidence: 0.25, iou: 0.5 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.locked, [{ image_id: held, user_id: bob.id, email: bob.email, expires_at: lock.body.expires_at }]);
      assert.deepEqual(res.body.images.map((i: { image_id: number }) => i.image_id), [free, own]);
      assert.equal(res.body.created, 4);
      const rows = await annotationRows(projectId);
      assert.deepEqual([...new Set(rows.map((r) => r.image_id))], [free, own]);
      const revisions = await revisionsOf(projectId);
      assert.deepEqual(revisions.map((r) => [r.annotation_id, r.action, r.user_id, r.before]), rows.map((r) => [r.id, 'create', alice.id, null]));
      for (const [i, r] of revisions.entries()) {
        assert.deepEqual(JSON.parse(r.after!), {
          class_id: rows[i].class_id, annotation_type: 'bbox', geometry: JSON.parse(rows[i].geometry), confidence: rows[i].confidence, source: `model:${model.id}`, status: 'suggested',
        });
      }
      // The history is what the revisions routes show, and a model's annotation reverts like any other.
      const history = await bob.get(`/api/annotations/${rows[0].id}/revisions`);
      assert.deepEqual(history.body.map((h: { action: string; user_id: number }) => [h.action, h.user_id]), [['create', alice.id]]);
      assert.equal((await alice.get(`/api/images/${free}/revisions`)).headers['x-total-count'], '2');
    });

    it('skips and reports locked images in a background job, with revisions for what it created', async () => {
      const projectId = await teamProject();
      await uploadModel(projectId, buildYoloModel('end2end'), 'e2e.onnx');
      const ids = (await uploadImages(projectId, await squareImages(10))).sort((a, b) => a - b);
      await bob.post(`/api/images/${ids[3]}/lock`);
      const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: 'e2e', confidence: 0.25, iou: 0.5 });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      await t.versa.deps.queue.drain();
      const job = (await alice.get(`/api/jobs/${res.body.job_id}`)).body;
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.result.created, 18);
      assert.equal(job.result.locked_count, 1);
      assert.deepEqual(job.result.locked.map((l: { image_id: number; email: string }) => [l.image_id, l.email]), [[ids[3], bob.email]]);
      const rows = await annotationRows(projectId);
      assert.ok(!rows.some((r) => r.image_id === ids[3]));
      const revisions = await revisionsOf(projectId);
      assert.deepEqual(revisions.map((r) => r.annotation_id).sort((a, b) => a - b), rows.map((r) => r.id));
      assert.ok(revisions.every((r) => r.action === 'create' && r.user_id === alice.id));
    });

    it("refuses SAM's save on an image locked by another user (409 naming the holder), previews still answer", async () => {
      const projectId = await teamProject();
      await uploadModel(projectId, buildSamEncoder(), 'sam_encoder.onnx');
      await uploadModel(projectId, buildSamDecoder(), 'sam_decoder.onnx');
      const [imageId] = await uploadImages(projectId, [await squaresPng(256, 160, [RED])]);
      const classId = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'thing' })).body.id as number;
      const url = `/api/projects/${projectId}/auto-annotate/sam`;
      const lock = await bob.post(`/api/images/${imageId}/lock`);
      const refused = await alice.post(url, { image_id: imageId, class_id: classId, points: [[40, 50]], labels: [1] });
      assert.equal(refused.status, 409);
      assert.match(refused.body.detail, new RegExp(`${bob.email} until ${lock.body.expires_at}`));
      assert.equal(refused.body.lock.user_id, bob.id);
      assert.equal((await alice.post(url, { image_id: imageId, points: [[40, 50]], labels: [1], preview: true })).status, 200);
      assert.deepEqual(await annotationRows(projectId), []);
      assert.deepEqual(await revisionsOf(projectId), []);
      // The holder saves, with a revision naming them.
      const saved = await bob.post(url, { image_id: imageId, class_id: classId, points: [[40, 50]], labels: [1] });
      assert.equal(saved.status, 201, JSON.stringify(saved.body));
      const revisions = await revisionsOf(projectId);
      assert.deepEqual(revisions.map((r) => [r.annotation_id, r.action, r.user_id]), [[saved.body.annotation.id, 'create', bob.id]]);
    });

    it('keeps annotators of assigned-only projects to their images', async () => {
      const projectId = await teamProject({ assigned_only: true });
      await uploadModel(projectId, buildYoloModel('v8'), 'det.onnx');
      const [mine, other] = await uploadImages(projectId, await squareImages(2));
      await alice.post(`/api/projects/${projectId}/classes`, { name: 'red' });
      await alice.post(`/api/projects/${projectId}/classes`, { name: 'green' });
      await alice.post(`/api/projects/${projectId}/assignments`, { user_id: bob.id, image_ids: [mine] });
      const url = `/api/projects/${projectId}/auto-annotate/yolo`;
      const foreign = await bob.post(url, { model: 'det', confidence: 0.25, iou: 0.5, image_ids: [mine, other] });
      assert.equal(foreign.status, 422);
      assert.deepEqual(foreign.body.detail[0].loc, ['body', 'image_ids', 1]);
      assert.deepEqual(await annotationRows(projectId), []);
      const all = await bob.post(url, { model: 'det', confidence: 0.25, iou: 0.5 });
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.deepEqual(all.body.images.map((i: { image_id: number }) => i.image_id), [mine]);
      assert.deepEqual([...new Set((await annotationRows(projectId)).map((r) => r.image_id))], [mine]);
    });
  });
});
