/**
 * Quality-control tasks on a video's frames (issues 26 and 29): a frame is dealt with the video's other frames (one
 * task set); the annotator's version holds tracks of their own — keyframes saved on frames, interpolated shapes read
 * on the frames between — never the video's real tracks; the set is submitted whole and scored frame by frame
 * against ground truth (a ground-truth frame's reference holds the video's real track shapes); the set is reviewed
 * whole too: listed once, decided once for all its frames, given back and resubmitted as one.
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

describe('a video task set is reviewed as one (issue 29)', () => {
  let t: TestApp;
  let owner: User;
  let reviewer: User;
  let ada: User;
  let projectId: number;
  let car: number;
  let videoId: number;
  let frames: { id: number; frame: number }[];
  const qc = () => `/api/projects/${projectId}/quality-control`;
  const frameId = (n: number) => frames.find((f) => f.frame === n)!.id;
  const set = async () => ((await ada.get(`${qc()}/tasks?video_id=${videoId}`)).body as (Task & { review_state: string | null; review_comment: string | null; review_round: number })[]).sort((a, b) => a.frame! - b.frame!);
  const track = (x: number, keyframe?: boolean) => ({ class_id: car, annotation_type: 'bbox', geometry: box(x), track_id: 1, ...(keyframe === undefined ? {} : { keyframe }) });

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    reviewer = await t.user();
    ada = await t.user();
    projectId = (await owner.post('/api/projects', { name: 'short video' })).body.id;
    car = (await owner.post(`/api/projects/${projectId}/classes`, { name: 'car' })).body.id;
    assert.equal((await owner.post(`/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' })).status, 201);
    assert.equal((await owner.post(`/api/projects/${projectId}/members`, { user_id: reviewer.id, role: 'reviewer' })).status, 201);
    const res = await owner.request({ method: 'POST', url: `/api/projects/${projectId}/videos`, ...multipart([{ name: 'file', filename: 'short.mp4', data: testVideo({ rate: 3, seconds: 1 }) }]) });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    videoId = res.body.id;
    await t.versa.deps.queue.drain();
    frames = (await owner.get(`/api/projects/${projectId}/images?video_id=${videoId}&limit=1000`)).body;
    assert.equal(frames.length, 3);
    assert.equal((await owner.put(`${qc()}/settings`, { overlap: 2 })).status, 200);
  });
  after(() => t.close());

  it('lists the set once, decides all its frames at once, gives it back whole and records each decision once', async () => {
    // Ada's set of three frames: a track keyed on frame 1, submitted from frame 0.
    assert.equal((await ada.post(`${qc()}/tasks/next`)).status, 200);
    assert.equal((await ada.put(`${qc()}/tasks/${frameId(1)}`, { shapes: [track(10)] })).status, 200);
    assert.equal((await ada.post(`${qc()}/tasks/${frameId(0)}/submit`)).status, 200);

    // One pending item for the set, showing its first frame with shapes, its three frames to step through.
    let pending = await reviewer.get(`${qc()}/task-reviews/pending`);
    assert.equal(pending.status, 200, JSON.stringify(pending.body));
    assert.deepEqual(pending.body.map((p: { video_id: number; frames: number; frame: number; image_id: number; round: number }) => [p.video_id, p.frames, p.frame, p.image_id, p.round]), [[videoId, 3, 1, frameId(1), 1]]);
    assert.deepEqual(pending.body[0].shapes, [track(10, true)]);
    assert.deepEqual(pending.body[0].video_frames.map((f: { frame: number; image_id: number; shapes: Shape[] }) => [f.frame, f.image_id, f.shapes]), [[0, frameId(0), []], [1, frameId(1), [track(10, true)]], [2, frameId(2), [track(10, false)]]]);
    // Any frame of the set finds it.
    assert.equal((await reviewer.get(`${qc()}/task-reviews/pending?image_id=${frameId(2)}`)).body[0]?.frame, 1);

    // Changes requested on frame 0: every frame is open again with the comment, nothing waits.
    const back = await reviewer.post(`${qc()}/task-reviews`, { image_id: frameId(0), user_id: ada.id, decision: 'changes_requested', comment: 'The car moves' });
    assert.equal(back.status, 201, JSON.stringify(back.body));
    assert.deepEqual([back.body.image_id, back.body.round], [frameId(0), 1]);
    assert.deepEqual((await set()).map((s) => [s.status, s.review_state, s.review_comment, s.review_round]), Array(3).fill(['open', 'changes_requested', 'The car moves', 1]));
    assert.deepEqual((await reviewer.get(`${qc()}/task-reviews/pending`)).body, []);
    assert.equal((await reviewer.post(`${qc()}/task-reviews`, { image_id: frameId(2), user_id: ada.id, decision: 'accepted' })).status, 409, 'the set is not pending');

    // The set is dealt again; a track edit on a frame other than the one decided saves; resubmitted, it waits once, round 2.
    assert.equal((await ada.post(`${qc()}/tasks/next`)).body.task.video_id, videoId);
    const edit = await ada.put(`${qc()}/tasks/${frameId(2)}`, { shapes: [track(30)] });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    assert.equal((await ada.post(`${qc()}/tasks/${frameId(2)}/submit`)).status, 200);
    pending = await reviewer.get(`${qc()}/task-reviews/pending`);
    assert.deepEqual(pending.body.map((p: { video_id: number; frames: number; round: number; last_comment: string | null }) => [p.video_id, p.frames, p.round, p.last_comment]), [[videoId, 3, 2, 'The car moves']]);

    // Two reviewers decide at once, on different frames: one decision wins, the other is 409; every frame accepted.
    const raced = await Promise.all([
      reviewer.post(`${qc()}/task-reviews`, { image_id: frameId(0), user_id: ada.id, decision: 'accepted' }),
      owner.post(`${qc()}/task-reviews`, { image_id: frameId(2), user_id: ada.id, decision: 'changes_requested', comment: 'Again' }),
    ]);
    assert.deepEqual(raced.map((r) => r.status).sort(), [201, 409]);
    const won = raced.find((r) => r.status === 201)!.body.decision as string;
    const finalState = won === 'accepted' ? ['submitted', 'accepted'] : ['open', 'changes_requested'];
    assert.deepEqual((await set()).map((s) => [s.status, s.review_state, s.review_round]), Array(3).fill([...finalState, 2]));

    // Recorded once per decision; the rates count the set once per decision.
    const record = (await reviewer.get(`${qc()}/task-reviews?user_id=${ada.id}`)).body as { round: number; decision: string }[];
    assert.deepEqual(record.map((r) => [r.round, r.decision]), [[1, 'changes_requested'], [2, won]]);
    const mine = ((await owner.get(`${qc()}/annotators`)).body as { user_id: number; reviews_decided: number; rework_rate: number | null }[]).find((a) => a.user_id === ada.id)!;
    assert.deepEqual([mine.reviews_decided, mine.rework_rate], [2, won === 'accepted' ? 1 / 2 : 1]);
  });
});
