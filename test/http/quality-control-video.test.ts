/**
 * Quality-control tasks on a video's frames (issues 26 and 29): a frame is dealt with the video's other frames (one
 * task set); the annotator's version holds tracks of their own — keyframes saved on frames, interpolated shapes read
 * on the frames between — never the video's real tracks; the set is submitted whole and scored frame by frame
 * against ground truth (a ground-truth frame's reference holds the video's real track shapes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { testVideo } from '../helpers/video-fixtures.js';

type User = Awaited<ReturnType<TestApp['user']>>;
interface Shape { class_id: number; annotation_type: string; geometry: Record<string, number>; track_id?: number; keyframe?: boolean }
interface Task { image_id: number; video_id: number | null; frame: number | null; status: string; shapes: Shape[] }

const box = (x: number) => ({ x, y: 20, width: 30, height: 30 });

describe('quality-control tasks on video frames (issues 26, 29)', () => {
  let t: TestApp;
  let owner: User;
  let ada: User;
  let projectId: number;
  let car: number;
  let videoId: number;
  let frames: { id: number; frame: number }[];
  const qc = () => `/api/projects/${projectId}/quality-control`;
  const frameId = (n: number) => frames.find((f) => f.frame === n)!.id;
  const task = async (who: Client, n: number): Promise<Task> => {
    const res = await who.get(`${qc()}/tasks/${frameId(n)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    ada = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'street video' })).body.id;
    car = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id;
    assert.equal((await owner.post(`/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' })).status, 201);
    const res = await owner.request({ method: 'POST', url: `/api/projects/${projectId}/videos`, ...multipart([{ name: 'file', filename: 'street.mp4', data: testVideo() }]) });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    videoId = res.body.id;
    await t.versa.deps.queue.drain();
    frames = (await owner.get(`/api/projects/${projectId}/images?video_id=${videoId}&limit=1000`)).body;
    assert.equal(frames.length, 20);
  });
  after(() => t.close());

  it('deals the video as one task set; task tracks are saved, interpolated and hidden in the task only; the set is submitted and scored per frame', async () => {
    // The lead's real track (keyframes on frames 0 and 10) and frame 5, approved, as hidden ground truth.
    const real = await owner.post(`/api/videos/${videoId}/tracks`, {
      class_id: car,
      keyframes: [{ frame: 0, annotation_type: 'bbox', geometry: box(10) }, { frame: 10, annotation_type: 'bbox', geometry: box(30) }],
    });
    assert.equal(real.status, 201, JSON.stringify(real.body));
    const review = await owner.post(`/api/projects/${projectId}/reviews`, { image_id: frameId(5) });
    assert.equal((await owner.post(`/api/reviews/${review.body.id}/decide`, { decision: 'approve' })).status, 200);
    const truth = await owner.post(`${qc()}/ground-truth`, { image_ids: [frameId(5)] });
    assert.equal(truth.status, 201, JSON.stringify(truth.body));
    assert.deepEqual(truth.body[0].shapes, [{ class_id: car, annotation_type: 'bbox', geometry: box(20) }], "a frame's reference holds the real track's shape there");
    assert.equal((await owner.put(`${qc()}/settings`, { overlap: 2, ground_truth_share: 0.5 })).status, 200);
    const tracksBefore = (await owner.get(`/api/videos/${videoId}/tracks`)).body;
    const labelsBefore = (await owner.get(`/api/images/${frameId(5)}/annotations`)).body;

    // Ada is dealt a frame: it comes with every other frame of the video, the hidden ground truth among them.
    const next = await ada.post(`${qc()}/tasks/next`);
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.task.video_id, videoId);
    const set = (await ada.get(`${qc()}/tasks?video_id=${videoId}`)).body as Task[];
    assert.deepEqual(set.map((s) => s.frame).sort((a, b) => a! - b!), [...Array(20).keys()]);
    assert.ok(set.every((s) => s.status === 'open' && s.shapes.length === 0 && s.video_id === videoId));
    // She has them all: asking again gives her open task, not another set.
    assert.equal((await ada.post(`${qc()}/tasks/next`)).body.task.image_id, next.body.task.image_id);

    // A track of her own: keyframes on frames 0 and 10, with a plain box on frame 0.
    const plain = { class_id: car, annotation_type: 'bbox', geometry: { x: 100, y: 60, width: 20, height: 20 } };
    let res = await ada.put(`${qc()}/tasks/${frameId(0)}`, { shapes: [plain, { class_id: car, annotation_type: 'bbox', geometry: box(10), track_id: 1 }] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.shapes, [plain, { class_id: car, annotation_type: 'bbox', geometry: box(10), track_id: 1, keyframe: true }]);
    res = await ada.put(`${qc()}/tasks/${frameId(10)}`, { shapes: [{ class_id: car, annotation_type: 'bbox', geometry: box(30), track_id: 1, keyframe: true }] });
    assert.equal(res.status, 200, JSON.stringify(res.body));

    // Frame 5 (between them) reads the interpolated box; frame 15 (after the last keyframe) the held one.
    assert.deepEqual((await task(ada, 5)).shapes, [{ class_id: car, annotation_type: 'bbox', geometry: box(20), track_id: 1, keyframe: false }]);
    assert.deepEqual((await task(ada, 15)).shapes, [{ class_id: car, annotation_type: 'bbox', geometry: box(30), track_id: 1, keyframe: false }]);
    assert.deepEqual((await ada.get(`${qc()}/tasks/${frameId(5)}/tracks`)).body, [{
      id: 1,
      class_id: car,
      keyframes: [{ frame: 0, annotation_type: 'bbox', geometry: box(10), outside: false }, { frame: 10, annotation_type: 'bbox', geometry: box(30), outside: false }],
    }]);
    // Saving frame 5 as read (the interpolated box sent back) stores nothing new: still two keyframes.
    res = await ada.put(`${qc()}/tasks/${frameId(5)}`, { shapes: (await task(ada, 5)).shapes });
    assert.equal(res.status, 200);
    assert.equal((await ada.get(`${qc()}/tasks/${frameId(5)}/tracks`)).body[0].keyframes.length, 2);

    // Frame 16 saved without the track: it is hidden from there on (frame 18 shows nothing), frame 12 still holds it.
    assert.equal((await ada.put(`${qc()}/tasks/${frameId(16)}`, { shapes: [] })).status, 200);
    assert.deepEqual((await task(ada, 18)).shapes, []);
    assert.equal((await task(ada, 12)).shapes.length, 1);

    // Bad input: one track twice on a frame, a class of no project's: 422, nothing saved.
    const twice = await ada.put(`${qc()}/tasks/${frameId(3)}`, { shapes: [{ class_id: car, annotation_type: 'bbox', geometry: box(1), track_id: 2 }, { class_id: car, annotation_type: 'bbox', geometry: box(2), track_id: 2 }] });
    assert.equal(twice.status, 422);
    assert.deepEqual(twice.body.detail[0].loc, ['body', 'shapes', 1, 'track_id']);
    assert.deepEqual((await task(ada, 3)).shapes.map((s) => s.track_id), [1]);

    // The video's real tracks and the frames' annotations are as they were.
    assert.deepEqual((await owner.get(`/api/videos/${videoId}/tracks`)).body, tracksBefore);
    assert.deepEqual((await owner.get(`/api/images/${frameId(5)}/annotations`)).body, labelsBefore);
    assert.deepEqual((await owner.get(`/api/images/${frameId(0)}/annotations`)).body.filter((a: { track_id?: number | null }) => a.track_id == null), []);

    // Submitting one frame submits the whole set; a save after it is 409.
    const submitted = await ada.post(`${qc()}/tasks/${frameId(7)}/submit`);
    assert.equal(submitted.status, 200, JSON.stringify(submitted.body));
    assert.ok(((await ada.get(`${qc()}/tasks?video_id=${videoId}`)).body as Task[]).every((s) => s.status === 'submitted'));
    assert.equal((await ada.put(`${qc()}/tasks/${frameId(3)}`, { shapes: [] })).status, 409);

    // Scored per frame: the ground-truth frame counts, her interpolated box on it matching the real track's.
    const annotators = (await owner.get(`${qc()}/annotators`)).body as { user_id: number; tasks_submitted: number; objects: number; ground_truth: { images: number; f1: number | null; mean_iou: number | null } }[];
    const mine = annotators.find((a) => a.user_id === ada.id)!;
    assert.equal(mine.tasks_submitted, 20);
    assert.deepEqual([mine.ground_truth.images, mine.ground_truth.f1, mine.ground_truth.mean_iou], [1, 1, 1]);
    // Her objects: the plain box, and the track's shape on frames 0–15 (hidden from 16).
    assert.equal(mine.objects, 1 + 16);
  });
});
