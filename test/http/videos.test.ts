import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { testVideo } from '../helpers/video-fixtures.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const upload = (client: Client, projectId: number, data: Buffer, fields: Record<string, string> = {}, filename = 'moving-box.mp4') =>
  client.request({ method: 'POST', url: `/api/projects/${projectId}/videos`, ...multipart([{ name: 'file', filename, data }], fields) });

const imageFiles = (t: TestApp, projectId: number) =>
  readdir(join(t.dataDir, 'blobs', 'projects', String(projectId), 'images')).catch(() => [] as string[]);

/** Issue 26: a video becomes frames (images with video, frame and timestamp); tracks with keyframes show on each frame. */
describe('videos and tracks over the API (issue 26)', () => {
  let t: TestApp;
  let alice: User;
  let stranger: User;
  let viewer: User;
  let projectId: number;
  let classId: number;
  let video: Buffer;
  let videoId: number;
  let frames: { id: number; frame: number; timestamp_s: number; video_id: number }[];

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    stranger = await t.user();
    viewer = await t.user();
    projectId = (await alice.post('/api/projects', { name: 'video' })).body.id;
    classId = (await alice.post(`/api/projects/${projectId}/classes`, { name: 'box' })).body.id;
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' })).status, 201);
    video = testVideo();
    const res = await upload(alice, projectId, video);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.status, 'decoding');
    videoId = res.body.id;
    await t.versa.deps.queue.drain();
    frames = (await alice.get(`/api/projects/${projectId}/images?video_id=${videoId}&limit=1000`)).body;
  });
  after(() => t.close());

  it('decodes every frame into an image with its frame number and timestamp', async () => {
    const res = await alice.get(`/api/videos/${videoId}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ready', res.body.error);
    assert.deepEqual([res.body.frame_count, res.body.width, res.body.height, res.body.fps, res.body.duration_s], [20, 160, 120, 10, 2]);
    assert.equal(frames.length, 20);
    assert.deepEqual(frames.map((f) => f.frame), [...Array(20).keys()]);
    assert.deepEqual(frames.map((f) => f.timestamp_s), [...Array(20).keys()].map((i) => i / 10));
    assert.ok(frames.every((f) => f.video_id === videoId));
    const image = (await alice.get(`/api/images/${frames[3].id}`)).body;
    assert.deepEqual([image.width, image.height, image.mime_type], [160, 120, 'image/jpeg']);
    const listed = (await alice.get(`/api/projects/${projectId}/videos`)).body;
    assert.deepEqual(listed.map((v: { id: number }) => v.id), [videoId]);
    const project = (await alice.get(`/api/projects/${projectId}`)).body;
    assert.equal(project.image_count, 20);
  });

  it('decodes every Nth frame with step, and refuses what is not a video', async () => {
    const res = await upload(alice, projectId, video, { step: '3' });
    assert.equal(res.status, 202);
    await t.versa.deps.queue.drain();
    const stepped = (await alice.get(`/api/projects/${projectId}/images?video_id=${res.body.id}`)).body;
    assert.deepEqual(stepped.map((f: { frame: number }) => f.frame), [0, 3, 6, 9, 12, 15, 18]);
    assert.deepEqual(stepped.map((f: { timestamp_s: number }) => f.timestamp_s), [0, 0.3, 0.6, 0.9, 1.2, 1.5, 1.8]);
    assert.equal((await alice.request({ method: 'DELETE', url: `/api/videos/${res.body.id}` })).status, 204);

    const text = await upload(alice, projectId, Buffer.from('not a video at all, just some text that is long enough to sniff'));
    assert.equal(text.status, 415, JSON.stringify(text.body));
    const truncated = await upload(alice, projectId, video.subarray(0, 200));
    assert.equal(truncated.status, 422, JSON.stringify(truncated.body));
    assert.match(truncated.body.detail[0].msg, /^"moving-box\.mp4" is not a readable video: Invalid data/);
    assert.doesNotMatch(JSON.stringify(truncated.body), /versa-test|upload\.bin/, 'no server path in the answer');
    assert.equal((await upload(alice, projectId, video, { step: '0' })).status, 422);
    assert.equal((await alice.get(`/api/projects/${projectId}/videos`)).body.length, 1, 'refused uploads leave no video');
  });

  it('lists a track with its keyframes and shows its shape on each frame, interpolated between keyframes', async () => {
    const create = await alice.post(`/api/videos/${videoId}/tracks`, {
      class_id: classId,
      keyframes: [
        { frame: 10, annotation_type: 'bbox', geometry: { x: 30, y: 60, width: 50, height: 20 } },
        { frame: 0, annotation_type: 'bbox', geometry: { x: 10, y: 20, width: 30, height: 40 } },
        { frame: 15, annotation_type: 'bbox', geometry: { x: 30, y: 60, width: 50, height: 20 }, outside: true },
      ],
    });
    assert.equal(create.status, 201, JSON.stringify(create.body));
    const track = create.body;
    assert.deepEqual(track.keyframes.map((k: { frame: number }) => k.frame), [0, 10, 15], 'sorted by frame');
    assert.deepEqual([track.video_id, track.project_id, track.class_id], [videoId, projectId, classId]);
    assert.deepEqual((await alice.get(`/api/videos/${videoId}/tracks`)).body, [track]);
    assert.deepEqual((await alice.get(`/api/tracks/${track.id}`)).body, track);

    const shapesOn = async (frame: number) => {
      const res = await alice.get(`/api/images/${frames[frame].id}/annotations`);
      assert.equal(res.status, 200);
      return res.body.filter((a: { track_id?: number }) => a.track_id === track.id);
    };
    const middle = await shapesOn(5);
    assert.equal(middle.length, 1);
    assert.deepEqual(middle[0].geometry, { x: 20, y: 40, width: 40, height: 30 });
    assert.equal(middle[0].interpolated, true);
    assert.equal(middle[0].class_id, classId);
    const [key] = await shapesOn(0);
    assert.deepEqual([key.interpolated, key.geometry], [false, { x: 10, y: 20, width: 30, height: 40 }]);
    assert.deepEqual(await shapesOn(16), [], 'outside from frame 15');
    assert.equal((await shapesOn(12))[0].interpolated, true, 'held until the outside keyframe');

    // An annotation drawn on the frame is listed beside the track's shape, and the total counts both.
    assert.equal((await alice.post(`/api/images/${frames[5].id}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } })).status, 201);
    const both = await alice.get(`/api/images/${frames[5].id}/annotations`);
    assert.equal(both.body.length, 2);
    assert.equal(both.headers['x-total-count'], '2');
    assert.equal(both.body[0].track_id, undefined);

    // Deleting a keyframe re-interpolates; upserting one replaces it; the class can change.
    const patched = await alice.patch(`/api/tracks/${track.id}`, {
      delete_frames: [10],
      keyframes: [{ frame: 0, annotation_type: 'bbox', geometry: { x: 0, y: 0, width: 10, height: 10 }, occluded: true }],
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.keyframes.map((k: { frame: number }) => k.frame), [0, 15]);
    const [held] = await shapesOn(5);
    assert.deepEqual([held.geometry, held.occluded], [{ x: 0, y: 0, width: 10, height: 10 }, true]);
    assert.equal((await alice.patch(`/api/tracks/${track.id}`, { delete_frames: [0, 15] })).status, 422, 'a track keeps a keyframe');

    assert.equal((await alice.request({ method: 'DELETE', url: `/api/tracks/${track.id}` })).status, 204);
    assert.deepEqual(await shapesOn(5), []);
    assert.equal((await alice.get(`/api/tracks/${track.id}`)).status, 404);
  });

  it('checks keyframes like annotations: geometry on the frame, frames in the video, no frame twice', async () => {
    const post = (keyframes: object[], class_id = classId) => alice.post(`/api/videos/${videoId}/tracks`, { class_id, keyframes });
    const outside = await post([{ frame: 0, annotation_type: 'bbox', geometry: { x: 500, y: 500, width: 10, height: 10 } }]);
    assert.equal(outside.status, 422);
    assert.deepEqual(outside.body.detail[0].loc, ['body', 'keyframes', 0, 'geometry']);
    const past = await post([{ frame: 20, annotation_type: 'bbox', geometry: { x: 0, y: 0, width: 10, height: 10 } }]);
    assert.deepEqual([past.status, past.body.detail[0].loc], [422, ['body', 'keyframes', 0, 'frame']]);
    const twice = await post([{ frame: 1, annotation_type: 'points', geometry: { points: [[1, 1]] } }, { frame: 1, annotation_type: 'points', geometry: { points: [[2, 2]] } }]);
    assert.deepEqual([twice.status, twice.body.detail[0].loc], [422, ['body', 'keyframes', 1, 'frame']]);
    const otherProject = (await stranger.post('/api/projects', { name: 'other' })).body.id;
    const foreignClass = (await stranger.post(`/api/projects/${otherProject}/classes`, { name: 'x' })).body.id;
    assert.equal((await post([{ frame: 0, annotation_type: 'points', geometry: { points: [[1, 1]] } }], foreignClass)).status, 422);
    assert.equal((await alice.get(`/api/videos/${videoId}/tracks`)).body.length, 0, 'nothing stored');
  });

  it('answers strangers 404 and anonymous callers 401; viewers read but may not write', async () => {
    const keyframes = [{ frame: 0, annotation_type: 'bbox', geometry: { x: 0, y: 0, width: 10, height: 10 } }];
    const trackId = (await alice.post(`/api/videos/${videoId}/tracks`, { class_id: classId, keyframes })).body.id;
    assert.equal((await t.client().get(`/api/videos/${videoId}`)).status, 401);
    assert.equal((await t.client().get(`/api/tracks/${trackId}`)).status, 401);
    for (const res of [
      await stranger.get(`/api/videos/${videoId}`),
      await stranger.get(`/api/projects/${projectId}/videos`),
      await stranger.get(`/api/videos/${videoId}/tracks`),
      await stranger.get(`/api/tracks/${trackId}`),
      await stranger.post(`/api/videos/${videoId}/tracks`, { class_id: classId, keyframes }),
      await stranger.patch(`/api/tracks/${trackId}`, { delete_frames: [0] }),
      await stranger.request({ method: 'DELETE', url: `/api/tracks/${trackId}` }),
      await stranger.request({ method: 'DELETE', url: `/api/videos/${videoId}` }),
      await upload(stranger, projectId, video),
    ]) assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal((await viewer.get(`/api/videos/${videoId}/tracks`)).status, 200);
    assert.equal((await viewer.get(`/api/tracks/${trackId}`)).status, 200);
    for (const res of [
      await viewer.post(`/api/videos/${videoId}/tracks`, { class_id: classId, keyframes }),
      await viewer.patch(`/api/tracks/${trackId}`, { delete_frames: [0] }),
      await viewer.request({ method: 'DELETE', url: `/api/tracks/${trackId}` }),
      await viewer.request({ method: 'DELETE', url: `/api/videos/${videoId}` }),
      await upload(viewer, projectId, video),
    ]) assert.equal(res.status, 403, JSON.stringify(res.body));

    // An annotator kept to assigned images sees the video but not its tracks, which span every frame (403).
    const annotator = await t.user();
    assert.equal((await alice.post(`/api/projects/${projectId}/members`, { user_id: annotator.id, role: 'annotator' })).status, 201);
    assert.equal((await alice.patch(`/api/projects/${projectId}`, { assigned_only: true })).status, 200);
    try {
      assert.equal((await annotator.get(`/api/videos/${videoId}`)).status, 200);
      for (const res of [
        await annotator.get(`/api/videos/${videoId}/tracks`),
        await annotator.get(`/api/tracks/${trackId}`),
        await annotator.post(`/api/videos/${videoId}/tracks`, { class_id: classId, keyframes }),
        await annotator.request({ method: 'DELETE', url: `/api/tracks/${trackId}` }),
        await upload(annotator, projectId, video),
      ]) assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal((await alice.get(`/api/tracks/${trackId}`)).status, 200, 'the track is still there');
    } finally {
      await alice.patch(`/api/projects/${projectId}`, { assigned_only: false });
    }
  });

  it("makes a frame's thumbnail on its first request, keeps it, and deletes it with the video", async () => {
    // The decoding writes the frames alone: their thumbnails are made when first asked for.
    const project = (await alice.post('/api/projects', { name: 'thumbnails' })).body.id;
    const thumbnails = () => readdir(join(t.dataDir, 'blobs', 'projects', String(project), 'thumbs')).catch(() => [] as string[]);
    const res = await upload(alice, project, video, { step: '5' });
    assert.equal(res.status, 202);
    await t.versa.deps.queue.drain();
    const stepped = (await alice.get(`/api/projects/${project}/images?video_id=${res.body.id}`)).body as { id: number }[];
    assert.equal(stepped.length, 4);
    assert.equal((await imageFiles(t, project)).length, 4);
    assert.deepEqual(await thumbnails(), [], 'no thumbnail made by the decoding');

    const url = `/api/images/${stepped[1].id}/thumbnail`;
    assert.equal((await t.client().get(url)).status, 401);
    assert.equal((await stranger.get(url)).status, 404);
    assert.deepEqual(await thumbnails(), [], 'none made for a caller who may not see it');
    // Two requests at once (a grid) make it once; both get it.
    const [first, second] = await Promise.all([alice.get(url), alice.get(url)]);
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.deepEqual(second.raw, first.raw);
    assert.equal(first.headers['content-type'], 'image/webp');
    const meta = await sharp(first.raw).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 160, 120], 'a frame smaller than a thumbnail keeps its size');
    assert.equal((await thumbnails()).length, 1);
    const again = await alice.get(url);
    assert.deepEqual(again.raw, first.raw, 'kept, served again as made');
    assert.equal((await thumbnails()).length, 1);

    assert.equal((await alice.request({ method: 'DELETE', url: `/api/videos/${res.body.id}` })).status, 204);
    assert.deepEqual([await thumbnails(), await imageFiles(t, project)], [[], []]);
  });

  it('deletes a video with its frames, their annotations, its tracks and every file', async () => {
    const before = (await alice.get(`/api/projects/${projectId}`)).body;
    assert.ok((await imageFiles(t, projectId)).length > 0);
    const res = await alice.request({ method: 'DELETE', url: `/api/videos/${videoId}` });
    assert.equal(res.status, 204);
    assert.equal(res.headers['x-deleted-images'], '20');
    assert.equal(res.headers['x-deleted-annotations'], '1');
    assert.equal((await alice.get(`/api/videos/${videoId}`)).status, 404);
    assert.equal((await alice.get(`/api/videos/${videoId}/tracks`)).status, 404);
    assert.equal((await alice.get(`/api/images/${frames[0].id}`)).status, 404);
    const project = (await alice.get(`/api/projects/${projectId}`)).body;
    assert.deepEqual([project.image_count, project.annotation_count], [before.image_count - 20, before.annotation_count - 1]);
    assert.deepEqual(await imageFiles(t, projectId), []);
    assert.deepEqual(await readdir(join(t.dataDir, 'blobs', 'projects', String(projectId), 'videos')), []);
  });

  it('claims a batch of frames with one statement, and writes the files of identical frames once', async () => {
    const claims = t.versa.deps.services.blobClaims;
    const session = claims.session.bind(claims);
    const held: number[] = [];
    claims.session = () => {
      const s = session();
      return { ...s, hold: (keys: string[]) => (held.push(keys.length), s.hold(keys)) };
    };
    try {
      const still = join(t.dataDir, 'still.mp4');
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=blue:size=160x120:rate=10', '-t', '4', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', still]);
      const project = (await alice.post('/api/projects', { name: 'still' })).body.id;
      assert.equal((await upload(alice, project, readFileSync(still))).status, 202);
      await t.versa.deps.queue.drain();
      const frames = (await alice.get(`/api/projects/${project}/images?limit=1000`)).body as { sha256: string }[];
      assert.equal(frames.length, 40);
      const distinct = new Set(frames.map((f) => f.sha256)).size;
      assert.ok(distinct < 40, `identical frames share their bytes (${distinct} distinct)`);
      // A claim per frame was 40 statements of 2 keys; now one per batch (30 frames, or what came in 250 ms).
      assert.ok(held.length < 10, `${held.length} claim statements for 40 frames`);
      assert.equal(held.reduce((a, b) => a + b, 0), 2 * distinct, 'each distinct frame\'s two files claimed once');
      assert.equal((await imageFiles(t, project)).length, distinct);
    } finally {
      claims.session = session;
    }
  });
});

describe('videos without FFmpeg (issue 26)', () => {
  it('answers 503 saying what to install', async () => {
    const t = await startTestApp({ FFMPEG_PATH: '/nonexistent/ffmpeg', FFPROBE_PATH: '/nonexistent/ffprobe' });
    try {
      const alice = await t.user();
      const projectId = (await alice.post('/api/projects', { name: 'no ffmpeg' })).body.id;
      const res = await upload(alice, projectId, testVideo({ seconds: 1 }));
      assert.equal(res.status, 503);
      assert.match(res.body.detail, /apt-get install ffmpeg/);
    } finally {
      await t.close();
    }
  });
});
