import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { rotatedCorners } from '../../src/imaging/geometry.js';
import { INLINE_IMAGE_LIMIT } from '../../src/modules/auto-annotate/auto-annotate.schemas.js';
import { multipart } from '../helpers/multipart.js';
import { buildSamDecoder, buildSamEncoder } from '../helpers/onnx/sam-models.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloObbModel, buildYoloPoseModel, OBB_ANGLES, OBB_CLASSES, POSE_KEYPOINT_CONFIDENCES, POSE_KEYPOINTS } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { zipEntries } from '../helpers/zip-entries.js';

type User = Awaited<ReturnType<TestApp['user']>>;
type Box = { x: number; y: number; width: number; height: number };

// A 200 × 120 image: letterboxed into the models' 128 × 128 input it is scaled by 0.64 and padded above and below.
const RED: Square = { x: 30, y: 40, width: 36, height: 30, colour: [255, 0, 0] };
const GREEN: Square = { x: 120, y: 20, width: 50, height: 70, colour: [0, 255, 0] };

const near = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);

function assertBox(actual: Box, expected: Box, tolerance = 2): void {
  for (const k of ['x', 'y', 'width', 'height'] as const) near(actual[k], expected[k], tolerance, `${k} of ${JSON.stringify(actual)}`);
}

/**
 * Corners as Ultralytics' `xywhr2xyxyxyxy` places them (ctr ± vec1 ± vec2: the angle turns the width axis from +x
 * towards +y, y down), listed from the top left before rotation, clockwise.
 */
function ultralyticsCorners(cx: number, cy: number, w: number, h: number, angle: number): [number, number][] {
  const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
  const v1 = [(w / 2) * cos, (w / 2) * sin];
  const v2 = [(-h / 2) * sin, (h / 2) * cos];
  return [[-1, -1], [1, -1], [1, 1], [-1, 1]].map(([a, b]) => [cx + a * v1[0] + b * v2[0], cy + a * v1[1] + b * v2[1]]);
}

function bounds(points: number[][]): Box {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
}

describe('shapes-auto-annotate: pose and OBB models write keypoints and rotated boxes; SAM takes a box (issue 25)', () => {
  let t: TestApp;
  let alice: User;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  const project = async (project_type: string) => {
    const res = await alice.post('/api/projects', { name: project_type, project_type });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as number;
  };
  const uploadModel = async (projectId: number, data: Uint8Array, filename: string) => {
    const res = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename, data: Buffer.from(data) }]) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: number; task: string };
  };
  const uploadImage = async (projectId: number, data: Buffer) => {
    const res = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart([{ filename: 'img.png', data, contentType: 'image/png' }]) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.images[0].id as number;
  };
  const annotate = async (projectId: number, modelId: number) => {
    const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: modelId, confidence: 0.25, iou: 0.5 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const acceptAndList = async (annotationId: number, imageId: number) => {
    const accepted = await alice.post(`/api/annotations/${annotationId}/accept`);
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    return ((await alice.get(`/api/images/${imageId}/annotations`)).body as any[]).find((a) => a.id === annotationId);
  };
  /** A project of `type` with the model and the red-and-green image, after one auto-annotate run. */
  const modelRun = async (type: string, data: Uint8Array, filename: string, classes: object[] = []) => {
    const projectId = await project(type);
    for (const c of classes) assert.equal((await alice.post(`/api/projects/${projectId}/classes`, c)).status, 201);
    const model = await uploadModel(projectId, data, filename);
    const imageId = await uploadImage(projectId, await squaresPng(200, 120, [RED, GREEN]));
    const body = await annotate(projectId, model.id);
    return { projectId, model, imageId, body, classes: (await alice.get(`/api/projects/${projectId}/classes`)).body as { id: number; name: string }[] };
  };
  const skeleton = { points: POSE_KEYPOINTS, edges: [[0, 2], [1, 2], [2, 3]], flip_pairs: [[0, 1]] };
  const poseRun = () => modelRun('keypoint_detection', buildYoloPoseModel(), 'yolo11n-pose.onnx', [{ name: 'person', skeleton }]);
  const obbRun = () => modelRun('oriented_detection', buildYoloObbModel(), 'yolo11n-obb.onnx');
  /**
   * Accepts the run's suggestions, freezes a version (no resize), exports it as YOLO and imports that archive as a
   * new project: the archive's entries, the new project and its one image's annotations.
   */
  const roundTrip = async (run: Awaited<ReturnType<typeof modelRun>>) => {
    for (const a of run.body.images[0].annotations) assert.equal((await alice.post(`/api/annotations/${a.id}/accept`)).status, 200);
    const version = await alice.post(`/api/projects/${run.projectId}/versions`, { name: 'v1', preprocessing_config: { resize: { enabled: false } } });
    assert.equal(version.status, 201, JSON.stringify(version.body));
    await t.versa.deps.queue.drain();
    const exported = await alice.post(`/api/projects/${run.projectId}/export`, { format: 'yolo', version_id: version.body.id });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    const zip = (await alice.get(exported.body.url)).raw as Buffer;
    const imported = await alice.request({ method: 'POST', url: '/api/projects/import', ...multipart([{ name: 'file', filename: 'v1.zip', data: zip, contentType: 'application/zip' }]) });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const [image] = (await alice.get(`/api/projects/${imported.body.id}/images`)).body as { id: number }[];
    const annotations = (await alice.get(`/api/images/${image.id}/annotations`)).body as any[];
    return { entries: await zipEntries(zip), project: imported.body, annotations, classes: (await alice.get(`/api/projects/${imported.body.id}/classes`)).body as any[] };
  };
  const annotationCount = async (projectId: number) => (await alice.get(`/api/projects/${projectId}`)).body.annotation_count as number;

  it('pose: an Ultralytics pose export suggests keypoints in the skeleton class, visible by confidence, in original pixels', async () => {
    const { projectId, model, imageId, body, classes } = await poseRun();
    assert.equal(model.task, 'pose');
    assert.deepEqual([body.created, body.skipped, body.classes_created], [1, 0, []]);
    const [suggestion] = body.images[0].annotations;
    assert.equal(suggestion.annotation_type, 'keypoints');
    assert.equal(suggestion.class_id, classes[0].id);
    assert.equal(suggestion.source, `model:${model.id}`);
    assert.equal(suggestion.status, 'suggested');
    near(suggestion.confidence, 1, 0.01, 'confidence');
    // The skeleton's points in order: the red square's top corners and centre, back through the letterbox. The one
    // the model is unsure of (0.3 < 0.5) is not labelled, nor the confident one it places above the image (y ≈ −22).
    const points = suggestion.geometry.points as [number, number, number][];
    assert.equal(points.length, POSE_KEYPOINTS.length);
    assert.deepEqual(POSE_KEYPOINT_CONFIDENCES, [0.9, 0.3, 0.8, 0.9]);
    assert.deepEqual(points.map((p) => p[2]), [2, 0, 2, 0]);
    const expected = [[RED.x, RED.y], [RED.x + RED.width, RED.y], [RED.x + RED.width / 2, RED.y + RED.height / 2]];
    for (const i of [0, 2]) {
      near(points[i][0], expected[i][0], 2, `keypoint ${i} x`);
      near(points[i][1], expected[i][1], 2, `keypoint ${i} y`);
    }
    assert.deepEqual([points[1], points[3]], [[0, 0, 0], [0, 0, 0]]);
    assertBox(suggestion.geometry.bbox, RED);
    assert.equal(await annotationCount(projectId), 0, 'a suggestion is no annotation until accepted');

    const stored = await acceptAndList(suggestion.id, imageId);
    assert.equal(stored.annotation_type, 'keypoints');
    assert.equal(stored.status, 'accepted');
    assert.deepEqual(stored.geometry, suggestion.geometry);
    assert.equal(await annotationCount(projectId), 1);
    // Run again: the accepted instance (matched by its box) is not suggested twice.
    const again = await annotate(projectId, model.id);
    assert.deepEqual([again.created, again.matched], [0, 1]);
  });

  it('pose: many images run as a job that creates the skeleton class once and suggests keypoints on each', async () => {
    const projectId = await project('keypoint_detection');
    const model = await uploadModel(projectId, buildYoloPoseModel(), 'pose.onnx');
    const count = INLINE_IMAGE_LIMIT + 1;
    for (let dx = 0; dx < count; dx++) await uploadImage(projectId, await squaresPng(200, 120, [{ ...RED, x: RED.x + dx }]));
    const res = await alice.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: model.id, confidence: 0.25, iou: 0.5 });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await t.versa.deps.queue.drain();
    const job = (await alice.get(`/api/jobs/${res.body.job_id}`)).body;
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual([job.result.created, job.result.skipped, job.result.classes_created], [count, 0, ['person']]);
    const classes = (await alice.get(`/api/projects/${projectId}/classes`)).body as any[];
    assert.deepEqual(classes.map((c) => [c.name, c.skeleton.points]), [['person', POSE_KEYPOINTS]]);
    const rows = await t.versa.deps.db.selectFrom('annotations').selectAll().where('project_id', '=', projectId).execute();
    assert.deepEqual(
      rows.map((r) => [r.annotation_type, r.class_id, JSON.parse(r.geometry).points.map((p: number[]) => p[2])]),
      Array.from({ length: count }, () => ['keypoints', classes[0].id, [2, 0, 2, 0]]),
    );
  });

  it('pose: a class the model names is created with its kpt_names and flip_idx; a class whose skeleton does not fit gets nothing', async () => {
    const fresh = await modelRun('keypoint_detection', buildYoloPoseModel(), 'pose.onnx');
    assert.deepEqual([fresh.body.created, fresh.body.classes_created], [1, ['person']]);
    const [person] = (await alice.get(`/api/projects/${fresh.projectId}/classes`)).body;
    assert.deepEqual(person.skeleton, { points: POSE_KEYPOINTS, edges: [], flip_pairs: [[0, 1]] });
    assert.equal(fresh.body.images[0].annotations[0].class_id, person.id);

    const misfit = await modelRun('keypoint_detection', buildYoloPoseModel(), 'pose.onnx', [{ name: 'person', skeleton: { points: ['nose', 'left_eye'], edges: [], flip_pairs: [] } }]);
    assert.deepEqual([misfit.body.created, misfit.body.skipped], [0, 1]);
    assert.deepEqual(await t.versa.deps.db.selectFrom('annotations').select('id').where('project_id', '=', misfit.projectId).execute(), []);
  });

  it('pose: a detection with no keypoint confident enough to label is counted as skipped, with nothing written', async () => {
    const unsure = await modelRun('keypoint_detection', buildYoloPoseModel(undefined, [0.2, 0.2, 0.2, 0.2]), 'pose.onnx', [{ name: 'person', skeleton }]);
    assert.deepEqual([unsure.body.created, unsure.body.skipped], [0, 1]);
    assert.deepEqual(await t.versa.deps.db.selectFrom('annotations').select('id').where('project_id', '=', unsure.projectId).execute(), []);
  });

  it('obb: an Ultralytics OBB export suggests rotated boxes, turned clockwise by its angle, in original pixels', async () => {
    const { projectId, model, imageId, body, classes } = await obbRun();
    assert.equal(model.task, 'obb');
    assert.equal(body.created, 2);
    assert.deepEqual([...body.classes_created].sort(), [...OBB_CLASSES].sort());
    const byClass = (name: string) => body.images[0].annotations.find((a: { class_id: number }) => a.class_id === classes.find((c) => c.name === name)!.id);
    for (const [i, square] of [RED, GREEN].entries()) {
      const box = byClass(OBB_CLASSES[i]);
      assert.equal(box.annotation_type, 'bbox');
      // The box before rotation is the square; the angle (30°, −20°) is clockwise on screen, kept in [0, 360).
      assertBox(box.geometry, square);
      // Within 0.1°: the letterbox's rounded height scales y a little more than x (77 / 120 against 0.64).
      near(box.geometry.rotation, ((OBB_ANGLES[i] * 180) / Math.PI + 360) % 360, 0.1, `rotation of ${OBB_CLASSES[i]}`);
      const want = ultralyticsCorners(square.x + square.width / 2, square.y + square.height / 2, square.width, square.height, OBB_ANGLES[i]);
      rotatedCorners(box.geometry).forEach(([x, y], k) => {
        near(x, want[k][0], 2, `corner ${k} x`);
        near(y, want[k][1], 2, `corner ${k} y`);
      });
    }

    const plane = byClass('plane');
    const stored = await acceptAndList(plane.id, imageId);
    assert.equal(stored.annotation_type, 'bbox');
    assert.deepEqual(stored.geometry, plane.geometry);
    assert.equal(await annotationCount(projectId), 1);
  });

  it('pose: accepted keypoints exported from a version as YOLO pose (kpt_shape, flip_idx) read back the same', async () => {
    const run = await poseRun();
    const { entries, project: back, annotations, classes } = await roundTrip(run);
    const yaml = parse(entries.get('data.yaml')!.toString());
    assert.deepEqual([yaml.kpt_shape, yaml.flip_idx], [[4, 3], [1, 0, 2, 3]]);
    assert.equal(back.project_type, 'keypoint_detection');
    assert.deepEqual(classes.map((c) => [c.name, c.skeleton.points.length, c.skeleton.flip_pairs]), [['person', POSE_KEYPOINTS.length, [[0, 1]]]]);
    const [sent] = run.body.images[0].annotations;
    assert.equal(annotations.length, 1);
    assert.equal(annotations[0].annotation_type, 'keypoints');
    (annotations[0].geometry.points as number[][]).forEach(([x, y, v], i) => {
      const [sx, sy, sv] = sent.geometry.points[i];
      assert.equal(v, sv, `visibility of point ${i}`);
      if (sv !== 0) {
        near(x, sx, 0.5, `point ${i} x`);
        near(y, sy, 0.5, `point ${i} y`);
      }
    });
    assertBox(annotations[0].geometry.bbox, sent.geometry.bbox, 0.5);
  });

  it('obb: accepted rotated boxes exported from a version as YOLO OBB read back the same', async () => {
    const run = await obbRun();
    const { project: back, annotations, classes } = await roundTrip(run);
    assert.equal(back.project_type, 'oriented_detection');
    const nameOf = (list: { id: number; name: string }[], id: number) => list.find((c) => c.id === id)!.name;
    const got = new Map(annotations.map((a) => [nameOf(classes, a.class_id), a.geometry]));
    assert.equal(got.size, 2);
    for (const sent of run.body.images[0].annotations) {
      const geometry = got.get(nameOf(run.classes, sent.class_id))!;
      assertBox(geometry, sent.geometry, 0.5);
      near(geometry.rotation, sent.geometry.rotation, 0.5, 'rotation');
    }
  });

  it('sam: a box prompt alone segments the object it frames; the mask and saved polygon lie inside the box', async () => {
    const red: Square = { x: 32, y: 40, width: 36, height: 28, colour: [255, 0, 0] };
    const green: Square = { x: 120, y: 20, width: 52, height: 72, colour: [0, 200, 0] };
    const projectId = await project('instance_segmentation');
    await uploadModel(projectId, buildSamEncoder(), 'sam_encoder.onnx');
    await uploadModel(projectId, buildSamDecoder(1024, { boxCorners: true }), 'sam_decoder.onnx');
    const imageId = await uploadImage(projectId, await squaresPng(256, 160, [red, green]));
    const classId = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'thing' })).body.id as number;
    const url = `/api/projects/${projectId}/auto-annotate/sam`;
    const inside = (b: Box, frame: Box) => b.x >= frame.x && b.y >= frame.y && b.x + b.width <= frame.x + frame.width && b.y + b.height <= frame.y + frame.height;

    for (const [square, frame] of [[green, { x: 110, y: 10, width: 74, height: 94 }], [red, { x: 26, y: 34, width: 50, height: 40 }]] as const) {
      const preview = await alice.post(url, { image_id: imageId, box: frame, preview: true });
      assert.equal(preview.status, 200, JSON.stringify(preview.body));
      assert.equal(preview.body.annotation, null);
      assertBox(preview.body.mask.bbox, square, 1);
      assert.ok(inside(preview.body.mask.bbox, frame), JSON.stringify(preview.body.mask.bbox));
    }
    const saved = await alice.post(url, { image_id: imageId, class_id: classId, box: { x: 110, y: 10, width: 74, height: 94 } });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    assert.equal(saved.body.annotation.annotation_type, 'polygon');
    assert.equal(saved.body.annotation.source, 'sam');
    const outline = bounds(saved.body.annotation.geometry.points);
    assertBox(outline, green, 1);
    assert.ok(inside(outline, { x: 110, y: 10, width: 74, height: 94 }));

    // A box past the image, or of no size, is refused with nothing saved.
    const count = async () => ((await alice.get(`/api/images/${imageId}/annotations`)).body as unknown[]).length;
    for (const box of [{ x: 200, y: 10, width: 74, height: 94 }, { x: 10, y: 10, width: 0, height: 20 }]) {
      const refused = await alice.post(url, { image_id: imageId, class_id: classId, box });
      assert.equal(refused.status, 422, JSON.stringify(refused.body));
    }
    assert.equal(await count(), 1);
  });
});
