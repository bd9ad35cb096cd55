/**
 * Drill (issue 26): a real server is killed with SIGKILL while a video is being decoded into frames. Nothing half made
 * is left: no frame row was recorded (they are recorded in one transaction at the end), and the decoding starts over
 * when the server comes back, ending with every frame, counters that agree with the rows and no stray files (the
 * frames' thumbnails are made on first request, so none are left by the decoding).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { eventually, serverProcess, type ServerProcess } from '../helpers/server-process.js';
import { testVideo } from '../helpers/video-fixtures.js';

describe('kill -9 during frame extraction (issue 26)', { timeout: 240_000 }, () => {
  let server: ServerProcess;
  before(async () => {
    server = await serverProcess();
  });
  after(() => server.dispose());

  it('records no frame of the interrupted decoding and decodes the video again on restart', async () => {
    const token = await server.login('video-drill@example.com');
    const projectId = (await server.api('POST', '/api/projects', { name: 'drill' }, token)).body.id;
    // 1080p, so that decoding outlasts a poll: at 640 × 480 a fast machine decoded every frame before the test saw it under way.
    const body = multipart([{ name: 'file', filename: 'long.mp4', data: testVideo({ size: '1920x1080', rate: 25, seconds: 10 }) }]);
    const res = await fetch(`${server.url}/api/projects/${projectId}/videos`, { method: 'POST', headers: { ...body.headers, authorization: `Bearer ${token}` }, body: new Uint8Array(body.payload) });
    assert.equal(res.status, 202);
    const video = await res.json();
    assert.equal(video.frame_count, 250);
    await eventually(async () => ((await server.api('GET', `/api/jobs/${video.job_id}`, undefined, token)).body.progress ?? 0) > 0.1, 60_000, 'the decoding under way');
    await server.kill();

    assert.equal(await server.count(`select count(*) from videos where id = ${video.id} and status = 'decoding'`), 1, 'killed mid-way');
    assert.equal(await server.count(`select count(*) from images where video_id = ${video.id}`), 0, 'no frame recorded');
    assert.equal(await server.count(`select image_count from projects where id = ${projectId}`), 0);

    await server.start();
    await eventually(async () => (await server.api('GET', `/api/videos/${video.id}`, undefined, token)).body.status !== 'decoding', 120_000, 'the decoding started over');
    const done = (await server.api('GET', `/api/videos/${video.id}`, undefined, token)).body;
    assert.equal(done.status, 'ready', done.error);
    assert.notEqual(done.job_id, video.job_id, 'a new job');
    assert.equal(await server.count(`select count(*) from images where video_id = ${video.id}`), 250);
    assert.equal(await server.count(`select count(distinct frame) from images where video_id = ${video.id}`), 250);
    assert.equal(await server.count(`select image_count from projects where id = ${projectId}`), 250);
    const distinct = await server.count(`select count(distinct sha256) from images where project_id = ${projectId}`);
    // Frames are written while FFmpeg decodes, so the kill may cut a blob write: its temporary file (never read,
    // removed by the blob store's sweep of unfinished writes) is not a frame file.
    const finished = async (dir: string) => (await server.files(dir)).filter((f) => !/\.[0-9a-f]{12}\.tmp$/.test(f));
    assert.equal((await finished(`blobs/projects/${projectId}/images`)).length, distinct, 'one file per distinct frame, no orphan');
    // Thumbnails are made on a frame's first request, not by the decoding: none yet, then the one asked for.
    assert.deepEqual(await finished(`blobs/projects/${projectId}/thumbs`), []);
    const frameId = await server.count(`select min(id) from images where video_id = ${video.id}`);
    const thumbnail = await fetch(`${server.url}/api/images/${frameId}/thumbnail`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(thumbnail.status, 200);
    assert.equal(thumbnail.headers.get('content-type'), 'image/webp');
    assert.equal((await finished(`blobs/projects/${projectId}/thumbs`)).length, 1);
    assert.deepEqual((await server.files('tmp')).filter((f) => f.startsWith('video-')), [], 'no work folder left');
  });
});
