/**
 * Issue 24, item 10: a truncated or damaged audio/video file was stored as a sample with `duration_s: null`, and
 * its time segments were then checked against nothing. A sample import is all or nothing, so such a file refuses
 * the import (422 naming the line and the file) and stores no row and no file; segments past a readable duration
 * are refused too. Both databases.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mp4File, wavFile } from '../helpers/media-fixtures.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** A WAV whose RIFF header is all there is: no format chunk, no samples. */
const headerOnlyWav = () => Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVE', 'latin1'), Buffer.alloc(60)]);

describe('malformed media in sample imports', () => {
  let t: TestApp;
  let owner: User;
  let pid: number;
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    pid = (await owner.post('/api/projects', { name: 'clips', project_type: 'classification' })).body.id;
  });
  after(() => t.close());

  const importZip = async (modality: 'audio' | 'video', rows: unknown[], files: { name: string; data: Buffer }[]) => {
    const zip = await buildZip([{ name: 'clips.jsonl', data: jsonl(rows) }, ...files]);
    const { payload, headers } = multipart([{ name: 'file', filename: 'clips.zip', data: zip }], { modality });
    return owner.request({ method: 'POST', url: `/api/projects/${pid}/import/jsonl`, payload, headers });
  };
  const stored = async () => {
    const rows = await t.versa.deps.db.selectFrom('samples').select('id').where('project_id', '=', pid).execute();
    const folder = join(t.dataDir, 'blobs');
    const files = await readdir(folder, { recursive: true }).catch(() => [] as string[]);
    return { rows: rows.length, media: files.filter((f) => /\.(wav|mp4)$/.test(f)).length };
  };

  it('refuses an audio file without a readable duration, naming the line and the file, and stores nothing', async () => {
    const res = await importZip('audio', [
      { file: 'good.wav', label: 'speech' },
      { file: 'broken.wav', label: 'speech', segments: [{ start_s: 0, end_s: 9, label: 'word' }] },
    ], [{ name: 'good.wav', data: wavFile(0.5) }, { name: 'broken.wav', data: headerOnlyWav() }]);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.detail[0].msg, /clips\.jsonl line 2 .*broken\.wav.*no readable duration/);
    assert.deepEqual(await stored(), { rows: 0, media: 0 });
  });

  it('refuses a video whose movie header gives no length, and an empty WAV', async () => {
    const video = await importZip('video', [{ file: 'zero.mp4' }], [{ name: 'zero.mp4', data: mp4File(0) }]);
    assert.equal(video.status, 422, JSON.stringify(video.body));
    assert.match(video.body.detail[0].msg, /zero\.mp4.*no readable duration/);
    const empty = await importZip('audio', [{ file: 'empty.wav' }], [{ name: 'empty.wav', data: wavFile(0) }]);
    assert.equal(empty.status, 422, JSON.stringify(empty.body));
    assert.deepEqual(await stored(), { rows: 0, media: 0 });
  });

  it('checks segments against the duration on import and on edit', async () => {
    const past = await importZip('audio', [{ file: 'a.wav', segments: [[0.2, 1.5, 'word']] }], [{ name: 'a.wav', data: wavFile(1) }]);
    assert.equal(past.status, 422, JSON.stringify(past.body));
    assert.match(past.body.detail[0].msg, /segments\[0\].*not inside the clip \(0 to 1 s\)/);
    assert.deepEqual(await stored(), { rows: 0, media: 0 });

    const ok = await importZip('audio', [{ file: 'a.wav', segments: [[0.2, 0.8, 'word']] }], [{ name: 'a.wav', data: wavFile(1) }]);
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(await stored(), { rows: 1, media: 1 });
    const [sample] = (await owner.get(`/api/projects/${pid}/samples`)).body;
    assert.equal(sample.data.duration_s, 1);
    const edit = await owner.patch(`/api/samples/${sample.id}`, { spans: [{ start_s: 0.5, end_s: 3, label: 'word' }] });
    assert.equal(edit.status, 422, JSON.stringify(edit.body));
    assert.deepEqual((await owner.get(`/api/samples/${sample.id}`)).body.spans, [{ start_s: 0.2, end_s: 0.8, label: 'word' }]);
  });
});
