import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { testVideo } from '../helpers/video-fixtures.js';
import { buildZip } from '../helpers/zip-build.js';

type User = Awaited<ReturnType<TestApp['user']>>;
type Frame = { id: number; frame: number; timestamp_s: number; video_id: number };

const jsonl = (rows: unknown[]) => Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
const send = (client: Client, sampleId: number, body: object) => client.post(`/api/samples/${sampleId}/frames`, body);
const files = (t: TestApp, projectId: number, kind: string) => readdir(join(t.dataDir, 'blobs', 'projects', String(projectId), kind)).catch(() => [] as string[]);

/** Issue 26, Samples: a video sample goes to an image project as frames; its time segments classify them. */
describe('a video sample sent to an image project as frames (issue 26)', () => {
  let t: TestApp;
  let alice: User;
  let stranger: User;
  let sourceId: number;
  let targetId: number;
  let sampleId: number;
  let textSampleId: number;
  let classIds: Record<string, number>;

  const framesOf = async (videoId: number): Promise<Frame[]> => (await alice.get(`/api/projects/${targetId}/images?video_id=${videoId}&limit=1000`)).body;
  const classesOn = async (imageId: number) =>
    ((await alice.get(`/api/images/${imageId}/annotations`)).body as { class_id: number; annotation_type: string }[])
      .map((a) => { assert.equal(a.annotation_type, 'classification'); return Object.entries(classIds).find(([, id]) => id === a.class_id)![0]; })
      .sort();
  const counters = async () => {
    const p = (await alice.get(`/api/projects/${targetId}`)).body;
    return { images: p.image_count, annotations: p.annotation_count, annotated: p.annotated_image_count };
  };

  before(async () => {
    t = await startTestApp();
    alice = await t.user();
    stranger = await t.user();
    sourceId = (await alice.post('/api/projects', { name: 'clips' })).body.id;
    // 2 s at 10 fps: frames at 0.0, 0.1, …, 1.9 s.
    const zip = await buildZip([
      { name: 'v.jsonl', data: jsonl([{ file: 'walk.mp4', segments: [[0.5, 1.2, 'walk'], [1.0, 1.6, 'run'], [0, 0.3, 'ghost']] }]) },
      { name: 'walk.mp4', data: testVideo({ seconds: 2, rate: 10 }) },
    ]);
    const imported = await alice.request({ method: 'POST', url: `/api/projects/${sourceId}/import/jsonl`, ...multipart([{ name: 'file', filename: 'v.zip', data: zip }], { modality: 'video' }) });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    sampleId = (await alice.get(`/api/projects/${sourceId}/samples?modality=video`)).body[0].id;
    textSampleId = (await alice.post(`/api/projects/${sourceId}/samples`, { modality: 'text', data: { text: 'not a video' } })).body.id;
    // Multi-label: overlapping segments give a frame both classes (a single-label project keeps one, see below).
    targetId = (await alice.post('/api/projects', { name: 'frames', project_type: 'classification', multi_label: true })).body.id;
    classIds = {};
    for (const name of ['walk', 'run', 'other']) classIds[name] = (await alice.post(`/api/projects/${targetId}/classes`, { name })).body.id;
  });
  after(() => t.close());

  it('decodes every frame and classifies those each segment covers; labels without a class are reported missing', async () => {
    const res = await send(alice, sampleId, { project_id: targetId });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(res.body.segment_classes, { matched: ['walk', 'run'], missing: ['ghost'] });
    assert.deepEqual([res.body.sample_id, res.body.project_id, res.body.step, res.body.range_start_s, res.body.range_end_s, res.body.expected_frames], [sampleId, targetId, 1, null, null, 20]);
    await t.versa.deps.queue.drain();
    const video = (await alice.get(`/api/videos/${res.body.video_id}`)).body;
    assert.equal(video.status, 'ready', video.error);
    assert.deepEqual([video.project_id, video.source_sample_id, video.name, video.frame_count, video.job_id], [targetId, sampleId, 'walk.mp4', 20, res.body.job_id]);
    const job = (await alice.get(`/api/jobs/${res.body.job_id}`)).body;
    assert.equal(job.status, 'succeeded');
    // walk covers 0.5–1.1 (7 frames), run 1.0–1.5 (6): 11 frames, 13 classifications.
    assert.deepEqual(job.result, { frames: 20, classified: 11, segment_classes: { matched: ['walk', 'run'], missing: ['ghost'] } });

    const frames = await framesOf(video.id);
    assert.deepEqual(frames.map((f) => f.frame), [...Array(20).keys()]);
    assert.deepEqual(frames.map((f) => f.timestamp_s), [...Array(20).keys()].map((i) => i / 10));
    const labelled = await Promise.all(frames.map((f) => classesOn(f.id)));
    const expected = frames.map((f) => [
      ...(f.timestamp_s >= 1.0 && f.timestamp_s < 1.6 ? ['run'] : []),
      ...(f.timestamp_s >= 0.5 && f.timestamp_s < 1.2 ? ['walk'] : []),
    ]);
    assert.deepEqual(labelled, expected);
    assert.deepEqual(labelled[0], [], 'the ghost segment has no class here: no annotation');
    assert.deepEqual(await counters(), { images: 20, annotations: 13, annotated: 11 });
    const revisions = (await alice.get(`/api/images/${frames[10].id}/revisions`)).body;
    assert.equal(revisions.length, 2, 'each classification has its create revision');
    // The source sample is untouched.
    assert.equal((await alice.get(`/api/samples/${sampleId}`)).body.spans.length, 3);
  });

  it('decodes only the clip from start_s to end_s, every step-th frame of it, and stores the range on the video', async () => {
    const before = await counters();
    const res = await send(alice, sampleId, { project_id: targetId, start_s: 0.5, end_s: 1.5, step: 2 });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual([res.body.range_start_s, res.body.range_end_s, res.body.step, res.body.expected_frames], [0.5, 1.5, 2, 5]);
    await t.versa.deps.queue.drain();
    const video = (await alice.get(`/api/videos/${res.body.video_id}`)).body;
    assert.equal(video.status, 'ready', video.error);
    assert.deepEqual([video.range_start_s, video.range_end_s, video.step], [0.5, 1.5, 2]);
    const frames = await framesOf(video.id);
    assert.deepEqual(frames.map((f) => f.frame), [5, 7, 9, 11, 13]);
    assert.deepEqual(frames.map((f) => f.timestamp_s), [0.5, 0.7, 0.9, 1.1, 1.3]);
    assert.ok(frames.every((f) => f.timestamp_s >= 0.5 && f.timestamp_s < 1.5));
    assert.deepEqual(await Promise.all(frames.map((f) => classesOn(f.id))), [['walk'], ['walk'], ['walk'], ['run', 'walk'], ['run']]);
    assert.deepEqual(await counters(), { images: before.images + 5, annotations: before.annotations + 6, annotated: before.annotated + 5 });
    // The end of the clip defaults to the video's end.
    const tail = await send(alice, sampleId, { project_id: targetId, start_s: 1.75 });
    assert.equal(tail.status, 202, JSON.stringify(tail.body));
    await t.versa.deps.queue.drain();
    assert.deepEqual((await framesOf(tail.body.video_id)).map((f) => f.frame), [18, 19]);
    assert.equal(tail.body.range_end_s, 2);
  });

  it('in a single-label project a frame under two segments gets the first segment\'s class; the other is counted (issue 30)', async () => {
    const single = (await alice.post('/api/projects', { name: 'one class a frame', project_type: 'classification' })).body.id;
    const ids: Record<string, number> = {};
    for (const name of ['walk', 'run']) ids[name] = (await alice.post(`/api/projects/${single}/classes`, { name })).body.id;
    const res = await send(alice, sampleId, { project_id: single });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await t.versa.deps.queue.drain();
    const job = (await alice.get(`/api/jobs/${res.body.job_id}`)).body;
    // walk 0.5–1.1 and run 1.0–1.5 share the frames at 1.0 and 1.1: they keep walk, run is left out twice.
    assert.deepEqual(job.result, { frames: 20, classified: 11, segment_classes: { matched: ['walk', 'run'], missing: ['ghost'] }, classes_left_out: 2 });
    const frames = (await alice.get(`/api/projects/${single}/images?video_id=${res.body.video_id}&limit=1000`)).body as Frame[];
    for (const f of frames) {
      const classes = ((await alice.get(`/api/images/${f.id}/annotations`)).body as { class_id: number }[]).map((a) => a.class_id);
      const expected = f.timestamp_s >= 0.5 && f.timestamp_s < 1.2 ? [ids.walk] : f.timestamp_s >= 1.0 && f.timestamp_s < 1.6 ? [ids.run] : [];
      assert.deepEqual(classes, expected, `frame at ${f.timestamp_s} s`);
    }
    assert.equal((await alice.get(`/api/projects/${single}`)).body.annotation_count, 11);
  });

  it('reports a class deleted before the decoding as missing in the job result, and adds nothing for it', async () => {
    const other = (await alice.post('/api/projects', { name: 'short-lived class' })).body.id;
    const runId = (await alice.post(`/api/projects/${other}/classes`, { name: 'run' })).body.id;
    const res = await send(alice, sampleId, { project_id: other });
    assert.deepEqual(res.body.segment_classes, { matched: ['run'], missing: ['walk', 'ghost'] });
    assert.equal((await alice.request({ method: 'DELETE', url: `/api/classes/${runId}` })).status, 204);
    await t.versa.deps.queue.drain();
    const job = (await alice.get(`/api/jobs/${res.body.job_id}`)).body;
    assert.deepEqual(job.result, { frames: 20, classified: 0, segment_classes: { matched: [], missing: ['walk', 'run', 'ghost'] } });
    assert.equal((await alice.get(`/api/projects/${other}`)).body.annotation_count, 0);
  });

  it('refuses a bad clip, a sample that is not a video and a bad step with 422, creating nothing', async () => {
    const before = (await alice.get(`/api/projects/${targetId}/videos`)).body.length;
    const cases: [object, (string | number)[], RegExp][] = [
      [{ start_s: 1, end_s: 1 }, ['body', 'end_s'], /greater than start_s/],
      [{ start_s: 1.5, end_s: 0.5 }, ['body', 'end_s'], /greater than start_s/],
      [{ end_s: 3 }, ['body', 'end_s'], /at most the video's duration \(2 s\)/],
      [{ start_s: 2 }, ['body', 'start_s'], /less than the video's duration \(2 s\)/],
      [{ start_s: -1 }, ['body', 'start_s'], /./],
      [{ step: 0 }, ['body', 'step'], /./],
    ];
    for (const [body, loc, msg] of cases) {
      const res = await send(alice, sampleId, { project_id: targetId, ...body });
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(res.body));
      assert.match(res.body.detail[0].msg, msg);
    }
    const text = await send(alice, textSampleId, { project_id: targetId });
    assert.equal(text.status, 422);
    assert.match(text.body.detail[0].msg, /is a text sample: only a video sample becomes frames/);
    assert.equal((await alice.get(`/api/projects/${targetId}/videos`)).body.length, before, 'nothing created');
    assert.deepEqual((await readdir(join(t.dataDir, 'tmp')).catch(() => [] as string[])).filter((f) => f.startsWith('sample-frames-')), [], 'no work folder left');
  });

  it('keeps to the scope: the sample must be readable (404), the target writable on the whole project (404/403)', async () => {
    const strangerProject = (await stranger.post('/api/projects', { name: 'theirs' })).body.id;
    const before = (await alice.get(`/api/projects/${targetId}/videos`)).body.length;
    assert.equal((await t.client().post(`/api/samples/${sampleId}/frames`, { project_id: targetId })).status, 401);
    assert.equal((await send(stranger, sampleId, { project_id: strangerProject })).status, 404, 'a sample of a project they are not in');
    // An annotator of the sample's project (alice, the first user, is the instance's admin and sees every project).
    const editor = await t.user();
    assert.equal((await alice.post(`/api/projects/${sourceId}/members`, { user_id: editor.id, role: 'annotator' })).status, 201);
    assert.equal((await send(editor, sampleId, { project_id: strangerProject })).status, 404, 'a target project they are not in');
    assert.equal((await send(alice, 999_999, { project_id: targetId })).status, 404);
    assert.equal((await send(alice, sampleId, { project_id: 999_999 })).status, 404);

    // A viewer of the target reads the sample but may not add images there.
    const viewer = await t.user();
    await alice.post(`/api/projects/${sourceId}/members`, { user_id: viewer.id, role: 'viewer' });
    await alice.post(`/api/projects/${targetId}/members`, { user_id: viewer.id, role: 'viewer' });
    const viewed = await send(viewer, sampleId, { project_id: targetId });
    assert.equal(viewed.status, 403, JSON.stringify(viewed.body));

    // Annotators kept to their assignments: an unassigned sample is not theirs to see (404); a target that keeps them
    // to assigned images refuses new ones (403), even with the sample assigned to them.
    const annotator = await t.user();
    await alice.post(`/api/projects/${sourceId}/members`, { user_id: annotator.id, role: 'annotator' });
    await alice.post(`/api/projects/${targetId}/members`, { user_id: annotator.id, role: 'annotator' });
    await alice.patch(`/api/projects/${sourceId}`, { assigned_only: true });
    await alice.patch(`/api/projects/${targetId}`, { assigned_only: true });
    try {
      assert.equal((await send(annotator, sampleId, { project_id: targetId })).status, 404);
      assert.equal((await alice.post(`/api/projects/${sourceId}/samples/assign`, { sample_ids: [sampleId], user_id: annotator.id })).status, 200);
      const res = await send(annotator, sampleId, { project_id: targetId });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      await alice.patch(`/api/projects/${targetId}`, { assigned_only: false });
      const allowed = await send(annotator, sampleId, { project_id: targetId, start_s: 0, end_s: 0.2 });
      assert.equal(allowed.status, 202, JSON.stringify(allowed.body));
      await t.versa.deps.queue.drain();
      assert.equal((await framesOf(allowed.body.video_id)).length, 2);
    } finally {
      await alice.patch(`/api/projects/${sourceId}`, { assigned_only: false });
      await alice.patch(`/api/projects/${targetId}`, { assigned_only: false });
    }
    assert.equal((await alice.get(`/api/projects/${targetId}/videos`)).body.length, before + 1, 'only the allowed request made a video');
  });
});

/** A decoding that fails half way (FFmpeg dies after some frames) records nothing and leaves no frame file. */
describe('a video sample whose decoding fails (issue 26)', () => {
  let dir: string;
  let t: TestApp;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-failing-ffmpeg-'));
    const script = join(dir, 'ffmpeg');
    // Answers -version, then passes on the first ~30 kB of frames and exits 1, as a crash mid-decoding would.
    await writeFile(script, '#!/bin/sh\nif [ "$1" = "-version" ]; then exec ffmpeg -version; fi\nffmpeg "$@" | head -c 30000\nexit 1\n');
    await chmod(script, 0o755);
    t = await startTestApp({ FFMPEG_PATH: script });
  });
  after(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('leaves no frame, no classification and no frame file, and the sample untouched', async () => {
    const alice = await t.user();
    const source = (await alice.post('/api/projects', { name: 'clips' })).body.id;
    const zip = await buildZip([
      { name: 'v.jsonl', data: jsonl([{ file: 'walk.mp4', segments: [[0, 2, 'walk']] }]) },
      { name: 'walk.mp4', data: testVideo({ seconds: 2, rate: 10 }) },
    ]);
    assert.equal((await alice.request({ method: 'POST', url: `/api/projects/${source}/import/jsonl`, ...multipart([{ name: 'file', filename: 'v.zip', data: zip }], { modality: 'video' }) })).status, 201);
    const sampleId = (await alice.get(`/api/projects/${source}/samples`)).body[0].id;
    const target = (await alice.post('/api/projects', { name: 'fails' })).body.id;
    await alice.post(`/api/projects/${target}/classes`, { name: 'walk' });
    const res = await send(alice, sampleId, { project_id: target });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await t.versa.deps.queue.drain();
    const video = (await alice.get(`/api/videos/${res.body.video_id}`)).body;
    assert.equal(video.status, 'failed');
    assert.match(video.error, /could not be decoded/);
    assert.equal((await alice.get(`/api/jobs/${res.body.job_id}`)).body.status, 'failed');
    const project = (await alice.get(`/api/projects/${target}`)).body;
    assert.deepEqual([project.image_count, project.annotation_count, project.annotated_image_count], [0, 0, 0]);
    assert.deepEqual((await alice.get(`/api/projects/${target}/images`)).body, []);
    assert.deepEqual(await files(t, target, 'images'), []);
    assert.deepEqual(await files(t, target, 'thumbs'), []);
    assert.equal((await alice.get(`/api/samples/${sampleId}/file`)).status, 200, "the sample's file is still there");
  });
});
