import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rotatedCorners } from '../../src/imaging/geometry.js';
import { multipart } from '../helpers/multipart.js';
import { buildSamDecoder, buildSamEncoder } from '../helpers/onnx/sam-models.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloObbModel, buildYoloPoseModel, OBB_ANGLES, OBB_CLASSES, POSE_KEYPOINT_CONFIDENCES, POSE_KEYPOINTS } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

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
  const annotationCount = async (projectId: number) => (await alice.get(`/api/projects/${projectId}`)).body.annotation_count as number;

  it('pose: an Ultralytics pose export suggests keypoints in the skeleton class, visible by confidence, in original pixels', async () => {
    const projectId = await project('keypoint_detection');
    const skeleton = { points: POSE_KEYPOINTS, edges: [[0, 2], [1, 2]], flip_pairs: [[0, 1]] };
    const person = await alice.post(`/api/projects/${projectId}/classes`, { name: 'person', skeleton });
    assert.equal(person.status, 201, JSON.stringify(person.body));
    const model = await uploadModel(projectId, buildYoloPoseModel(), 'yolo11n-pose.onnx');
    assert.equal(model.task, 'pose');
    const imageId = await uploadImage(projectId, await squaresPng(200, 120, [RED, GREEN]));

    const body = await annotate(projectId, model.id);
    assert.deepEqual([body.created, body.skipped, body.classes_created], [1, 0, []]);
    const [suggestion] = body.images[0].annotations;
    assert.equal(suggestion.annotation_type, 'keypoints');
    assert.equal(suggestion.class_id, person.body.id);
    assert.equal(suggestion.source, `model:${model.id}`);
    assert.equal(suggestion.status, 'suggested');
    near(suggestion.confidence, 1, 0.01, 'confidence');
    // The skeleton's three points in order: the red square's top corners and centre, back through the letterbox;
    // the one the model is unsure of (0.3 < 0.5) is not labelled.
    const points = suggestion.geometry.points as [number, number, number][];
    assert.equal(points.length, POSE_KEYPOINTS.length);
    assert.deepEqual(points.map((p) => p[2]), POSE_KEYPOINT_CONFIDENCES.map((c) => (c >= 0.5 ? 2 : 0)));
    const expected = [[RED.x, RED.y], [RED.x + RED.width, RED.y], [RED.x + RED.width / 2, RED.y + RED.height / 2]];
    for (const i of [0, 2]) {
      near(points[i][0], expected[i][0], 2, `keypoint ${i} x`);
      near(points[i][1], expected[i][1], 2, `keypoint ${i} y`);
    }
    assert.deepEqual(points[1], [0, 0, 0]);
    assertBox(suggestion.geometry.bbox, RED);
    assert.equal(await annotationCount(projectId), 0, 'a suggestion is no annotation until accepted');

    const stored = await acceptAndList(suggestion.id, imageId);
    assert.equal(stored.annotation_type, 'keypoints');
    assert.equal(stored.status, 'accepted');
    assert.deepEqual(stored.geometry, suggestion.geometry);
    assert.equal(await annotationCount(projectId), 1);
  });

  it('pose: a class the model names is created with its kpt_names and flip_idx; a class whose skeleton does not fit gets nothing', async () => {
    const fresh = await project('keypoint_detection');
    const model = await uploadModel(fresh, buildYoloPoseModel(), 'pose.onnx');
    await uploadImage(fresh, await squaresPng(200, 120, [RED]));
    const created = await annotate(fresh, model.id);
    assert.deepEqual([created.created, created.classes_created], [1, ['person']]);
    const [person] = (await alice.get(`/api/projects/${fresh}/classes`)).body;
    assert.deepEqual(person.skeleton, { points: POSE_KEYPOINTS, edges: [], flip_pairs: [[0, 1]] });
    assert.equal(created.images[0].annotations[0].class_id, person.id);

    const misfit = await project('keypoint_detection');
    const face = await alice.post(`/api/projects/${misfit}/classes`, { name: 'person', skeleton: { points: ['nose', 'left_eye'], edges: [], flip_pairs: [] } });
    assert.equal(face.status, 201, JSON.stringify(face.body));
    const other = await uploadModel(misfit, buildYoloPoseModel(), 'pose.onnx');
    await uploadImage(misfit, await squaresPng(200, 120, [RED]));
    const refused = await annotate(misfit, other.id);
    assert.deepEqual([refused.created, refused.skipped], [0, 1]);
    assert.deepEqual(await t.versa.deps.db.selectFrom('annotations').select('id').where('project_id', '=', misfit).execute(), []);
  });

  it('obb: an Ultralytics OBB export suggests rotated boxes, turned clockwise by its angle, in original pixels', async () => {
    const projectId = await project('oriented_detection');
    const model = await uploadModel(projectId, buildYoloObbModel(), 'yolo11n-obb.onnx');
    assert.equal(model.task, 'obb');
    const imageId = await uploadImage(projectId, await squaresPng(200, 120, [RED, GREEN]));

    const body = await annotate(projectId, model.id);
    assert.equal(body.created, 2);
    assert.deepEqual([...body.classes_created].sort(), [...OBB_CLASSES].sort());
    const classes = (await alice.get(`/api/projects/${projectId}/classes`)).body as { id: number; name: string }[];
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
