import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { GREEN_AT, RED_AT, trackingVideo } from '../helpers/tracking-video.js';

type User = Awaited<ReturnType<TestApp['user']>>;
type Box = { x: number; y: number; width: number; height: number };
type Suggestion = { id: number; class_id: number; source: string; first_frame: number; last_frame: number; score: number; boxes: (Box & { frame: number; score: number })[] };

const near = (actual: Box, expected: Box, what: string, tolerance = 3) => {
  for (const k of ['x', 'y', 'width', 'height'] as const) assert.ok(Math.abs(actual[k] - expected[k]) <= tolerance, `${what}: ${k} ${actual[k]} vs ${expected[k]}`);
};

/** Issue 26: a detector over a video's frames, its boxes linked into tracks that wait as suggestions to accept or reject. */
describe('automatic tracking over the API (issue 26)', () => {
  let t: TestApp;
  let alice: User;
  let stranger: User;
  let viewer: User;
  let projectId: number;
  let videoId: number;
  let modelId: number;
  let red: number;
  let green: number;
  let frames: { id: number; frame: number }[];

  const run = (user: User, body: Record<string, unknown>) => user.post(`/api/videos/${videoId}/track-suggestions`, body);
  const suggestions = async (): Promise<Suggestion[]> => {
    const res = await alice.get(`/api/videos/${videoId}/track-suggestions`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const runAndWait = async (body: Record<string, unknown> = { model: modelId }) => {
    const res = await run(alice, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await t.versa.deps.queue.drain();
    const job = (await alice.get(res.body.url)).body;
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    return { started: res.body, job };
  };

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    stranger = await t.user();
    viewer = await t.user();
    projectId = (await alice.post('/api/projects', { name: 'tracking' })).body.id;
    red = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'red' })).body.id;
    green = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'green' })).body.id;
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' })).status, 201);
    const model = await alice.request({
      method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'det.onnx', data: Buffer.from(buildYoloModel('v8', { width: 160, height: 128 })) }]),
    });
    assert.equal(model.status, 201, JSON.stringify(model.body));
    modelId = model.body.id;
    const video = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/videos`, ...multipart([{ name: 'file', filename: 'two-boxes.mp4', data: trackingVideo() }]) });
    assert.equal(video.status, 202, JSON.stringify(video.body));
    videoId = video.body.id;
    await t.versa.deps.queue.drain();
    frames = (await alice.get(`/api/projects/${projectId}/images?video_id=${videoId}&limit=1000`)).body;
    assert.equal(frames.length, 20);
  });
  after(() => t.close());

  it('runs the detector over the frames in a job and suggests one track per object, following it', async () => {
    const { started, job } = await runAndWait();
    assert.deepEqual([started.first_frame, started.last_frame, started.frame_count, started.model_id], [0, 19, 20, modelId]);
    assert.equal(job.result.tracks, 2, JSON.stringify(job.result));
    const listed = await suggestions();
    assert.deepEqual(listed.map((s) => s.class_id).sort(), [red, green].sort());
    for (const s of listed) {
      const at = s.class_id === red ? RED_AT : GREEN_AT;
      assert.equal(s.source, `model:${modelId}`);
      assert.deepEqual([s.first_frame, s.last_frame], [0, 19]);
      assert.deepEqual(s.boxes.map((b) => b.frame), [...Array(20).keys()], 'a box on every frame');
      for (const b of s.boxes) near(b, at(b.frame), `class ${s.class_id} frame ${b.frame}`);
      assert.ok(s.score > 0.9);
    }
    // A re-run replaces the model's open suggestions rather than adding to them.
    const again = await runAndWait();
    assert.equal(again.job.result.replaced, 2);
    assert.equal((await suggestions()).length, 2);
  });

  it('accepts a suggestion as a track with keyframes only where motion departs from interpolation, or on every frame', async () => {
    if ((await suggestions()).length < 2) await runAndWait();
    const [first, second] = await suggestions();
    const accepted = await alice.post(`/api/track-suggestions/${first.id}/accept`, {});
    assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
    const track = accepted.body;
    assert.equal(track.class_id, first.class_id);
    assert.ok(track.keyframes.length >= 2 && track.keyframes.length < 10, `straight motion needs few keyframes, got ${track.keyframes.length}`);
    assert.deepEqual([track.keyframes[0].frame, track.keyframes.at(-1).frame], [0, 19]);
    // Every frame shows the track, interpolated between keyframes, where the object is.
    const at = first.class_id === red ? RED_AT : GREEN_AT;
    const shapes = (await alice.get(`/api/images/${frames.find((f) => f.frame === 11)!.id}/annotations`)).body;
    const shape = shapes.find((a: { track_id?: number }) => a.track_id === track.id);
    assert.ok(shape, JSON.stringify(shapes));
    near(shape.geometry, at(11), 'interpolated frame 11');
    assert.deepEqual((await alice.get(`/api/videos/${videoId}/tracks`)).body.map((x: { id: number }) => x.id), [track.id]);
    assert.deepEqual((await suggestions()).map((s) => s.id), [second.id], 'the accepted suggestion is gone');
    assert.equal((await alice.post(`/api/track-suggestions/${first.id}/accept`, {})).status, 404, 'accepted once only');

    const everyFrame = await alice.post(`/api/track-suggestions/${second.id}/accept`, { every_frame: true });
    assert.equal(everyFrame.status, 201);
    assert.deepEqual(everyFrame.body.keyframes.map((k: { frame: number }) => k.frame), [...Array(20).keys()]);
    assert.deepEqual(await suggestions(), []);
  });

  it('tracks a frame range, ends a track with an outside keyframe, and rejects suggestions', async () => {
    const { started } = await runAndWait({ model: 'det', first_frame: 5, last_frame: 9 });
    assert.deepEqual([started.first_frame, started.last_frame, started.frame_count], [5, 9, 5]);
    const listed = await suggestions();
    assert.equal(listed.length, 2);
    for (const s of listed) assert.deepEqual([s.first_frame, s.last_frame], [5, 9]);
    const track = (await alice.post(`/api/track-suggestions/${listed[0].id}/accept`, {})).body;
    assert.deepEqual(track.keyframes.at(-1), { ...track.keyframes.at(-2), frame: 10, outside: true });
    const rejected = await alice.request({ method: 'DELETE', url: `/api/track-suggestions/${listed[1].id}` });
    assert.equal(rejected.status, 204);
    assert.deepEqual(await suggestions(), []);
    assert.equal((await alice.request({ method: 'DELETE', url: `/api/track-suggestions/${listed[1].id}` })).status, 404);
  });

  it('refuses bad input, strangers (404), anonymous callers (401) and viewers (403)', async () => {
    for (const body of [
      { model: modelId, last_frame: 20 },
      { model: modelId, first_frame: 9, last_frame: 5 },
      { model: modelId, high_score: 0.3, low_score: 0.4 },
      { model: 'no such model' },
      { model: modelId, high_score: 2 },
      {},
    ]) assert.equal((await run(alice, body)).status, 422, JSON.stringify(body));
    assert.equal((await t.client().post(`/api/videos/${videoId}/track-suggestions`, { model: modelId })).status, 401);
    assert.equal((await t.client().get(`/api/videos/${videoId}/track-suggestions`)).status, 401);
    await runAndWait();
    const [one] = await suggestions();
    for (const res of [
      await run(stranger, { model: modelId }),
      await stranger.get(`/api/videos/${videoId}/track-suggestions`),
      await stranger.post(`/api/track-suggestions/${one.id}/accept`, {}),
      await stranger.request({ method: 'DELETE', url: `/api/track-suggestions/${one.id}` }),
      await alice.post('/api/track-suggestions/999999/accept', {}),
      await alice.get('/api/videos/999999/track-suggestions'),
    ]) assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal((await viewer.get(`/api/videos/${videoId}/track-suggestions`)).status, 200);
    for (const res of [
      await run(viewer, { model: modelId }),
      await viewer.post(`/api/track-suggestions/${one.id}/accept`, {}),
      await viewer.request({ method: 'DELETE', url: `/api/track-suggestions/${one.id}` }),
    ]) assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal((await suggestions()).length, 2, 'nothing refused changed anything');
  });

  it('deletes a video with its suggestions', async () => {
    if ((await suggestions()).length === 0) await runAndWait();
    assert.equal((await alice.request({ method: 'DELETE', url: `/api/videos/${videoId}` })).status, 204);
    const left = await t.versa.deps.db.selectFrom('track_suggestions').select('id').where('project_id', '=', projectId).execute();
    assert.deepEqual(left, []);
  });
});
