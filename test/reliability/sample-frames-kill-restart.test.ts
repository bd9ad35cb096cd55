/**
 * Drill (issue 26, Samples): a real server is killed with SIGKILL while a video sample sent to an image project is
 * being decoded into frames. Nothing half made is left: no frame and no classification is recorded; when the server
 * comes back the decoding starts over from the video row (its clip and the sample's segments are kept there) and ends
 * with the clip's frames, their classifications and counters that agree with the rows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { eventually, serverProcess, type ServerProcess } from '../helpers/server-process.js';
import { testVideo } from '../helpers/video-fixtures.js';
import { buildZip } from '../helpers/zip-build.js';

describe('kill -9 while a video sample becomes frames (issue 26)', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  before(async () => {
    server = await serverProcess();
  });
  after(() => server.dispose());

  it('records nothing of the interrupted decoding and makes the clip\'s classified frames on restart', async () => {
    const token = await server.login('sample-frames-drill@example.com');
    const sourceId = (await server.api('POST', '/api/projects', { name: 'clips' }, token)).body.id;
    const zip = await buildZip([
      { name: 'v.jsonl', data: Buffer.from(JSON.stringify({ file: 'long.mp4', segments: [[2, 4, 'walk'], [3, 6, 'run'], [0, 1, 'ghost']] }) + '\n') },
      { name: 'long.mp4', data: testVideo({ size: '1920x1080', rate: 25, seconds: 10 }) },
    ]);
    const body = multipart([{ name: 'file', filename: 'v.zip', data: zip }], { modality: 'video' });
    const imported = await fetch(`${server.url}/api/projects/${sourceId}/import/jsonl`, { method: 'POST', headers: { ...body.headers, authorization: `Bearer ${token}` }, body: new Uint8Array(body.payload) });
    assert.equal(imported.status, 201, await imported.text());
    const sampleId = (await server.api('GET', `/api/projects/${sourceId}/samples`, undefined, token)).body[0].id;
    const targetId = (await server.api('POST', '/api/projects', { name: 'frames' }, token)).body.id;
    for (const name of ['walk', 'run']) assert.equal((await server.api('POST', `/api/projects/${targetId}/classes`, { name }, token)).status, 201);

    // The clip 1–9 s: frames 25 to 224, at 1080p so that decoding them outlasts a poll (at 640 × 480 a fast machine
    // decoded all 200 in 0.34 s, before the test saw it under way, and the kill came too late).
    const sent = await server.api('POST', `/api/samples/${sampleId}/frames`, { project_id: targetId, start_s: 1, end_s: 9 }, token);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.equal(sent.body.expected_frames, 200);
    await eventually(async () => ((await server.api('GET', `/api/jobs/${sent.body.job_id}`, undefined, token)).body.progress ?? 0) > 0.1, 60_000, 'the decoding under way');
    await server.kill();

    const videoId = sent.body.video_id;
    assert.equal(await server.count(`select count(*) from videos where id = ${videoId} and status = 'decoding'`), 1, 'killed mid-way');
    assert.equal(await server.count(`select count(*) from images where video_id = ${videoId}`), 0, 'no frame recorded');
    assert.equal(await server.count(`select count(*) from annotations where project_id = ${targetId}`), 0, 'no classification recorded');
    assert.equal(await server.count(`select image_count + annotation_count + annotated_image_count from projects where id = ${targetId}`), 0);

    await server.start();
    await eventually(async () => (await server.api('GET', `/api/videos/${videoId}`, undefined, token)).body.status !== 'decoding', 120_000, 'the decoding started over');
    const done = (await server.api('GET', `/api/videos/${videoId}`, undefined, token)).body;
    assert.equal(done.status, 'ready', done.error);
    assert.deepEqual([done.range_start_s, done.range_end_s, done.source_sample_id], [1, 9, sampleId]);
    assert.equal(await server.count(`select count(*) from images where video_id = ${videoId}`), 200);
    assert.equal(await server.count(`select min(frame) from images where video_id = ${videoId}`), 25);
    assert.equal(await server.count(`select max(frame) from images where video_id = ${videoId}`), 224);
    assert.equal(await server.count(`select count(distinct frame) from images where video_id = ${videoId}`), 200);
    // walk covers 2–4 s (50 frames), run 3–6 s (75): 125 classifications on the 100 frames of 2–6 s.
    assert.equal(await server.count(`select count(*) from annotations where project_id = ${targetId} and annotation_type = 'classification'`), 125);
    assert.equal(await server.count(`select count(*) from images where video_id = ${videoId} and annotation_count > 0`), 100);
    assert.equal(await server.count(`select count(*) from images i where video_id = ${videoId} and annotation_count <> (select count(*) from annotations a where a.image_id = i.id)`), 0, 'per-frame counts agree');
    assert.equal(await server.count(`select image_count from projects where id = ${targetId}`), 200);
    assert.equal(await server.count(`select annotation_count from projects where id = ${targetId}`), 125);
    assert.equal(await server.count(`select annotated_image_count from projects where id = ${targetId}`), 100);
    const distinct = await server.count(`select count(distinct sha256) from images where project_id = ${targetId}`);
    const finished = async (dir: string) => (await server.files(dir)).filter((f) => !/\.[0-9a-f]{12}\.tmp$/.test(f));
    assert.equal((await finished(`blobs/projects/${targetId}/images`)).length, distinct, 'one file per distinct frame, no orphan');
    assert.deepEqual((await server.files('tmp')).filter((f) => f.startsWith('video-') || f.startsWith('sample-frames-')), [], 'no work folder left');
  });
});
