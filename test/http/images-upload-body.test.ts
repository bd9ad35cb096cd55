import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

/** A body as the standard `FormData` encoder (browsers, undici) writes it. */
async function encodeForm(form: FormData): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { payload: Buffer.from(await request.arrayBuffer()), headers: { 'content-type': request.headers.get('content-type')! } };
}

/** A body of `count` copies of one raw part, closed properly. */
function repeatedParts(count: number, part: string): { payload: Buffer; headers: Record<string, string> } {
  const boundary = 'versa-limits';
  const payload = Buffer.from(`--${boundary}\r\n${part}\r\n`.repeat(count) + `--${boundary}--\r\n`);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const FILE_PART = 'Content-Disposition: form-data; name="files"; filename="x.bin"\r\n\r\nabc';

describe('image upload bodies', () => {
  let t: TestApp;
  let alice: Client;
  let projectId: number;
  const post = (body: { payload: Buffer; headers: Record<string, string> }) =>
    alice.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...body });
  const nothingStored = async () => {
    const rows = await t.versa.database.db.selectFrom('images').select('id').where('project_id', '=', projectId).execute();
    assert.equal(rows.length, 0);
  };

  before(async () => {
    t = await startTestApp();
    await t.user();
    alice = await t.user();
    projectId = (await alice.post('/api/projects', { name: 'bodies' })).body.id;
  });
  after(() => t.close());

  it('reads file names as the FormData encoder writes them: raw UTF-8, base name only', async () => {
    const form = new FormData();
    form.append('note', 'a text field is ignored');
    form.append('files', new Blob(['not an image']), 'café ü 日本.jpg');
    form.append('other', new Blob(['another field name is ignored']), 'other.jpg');
    form.append('files', new Blob(['not an image']), 'q"uo\\te\nx.jpg');
    form.append('files', new Blob(['not an image']), 'dir/sub\\x.jpg');
    const res = await post(await encodeForm(form));
    assert.equal(res.status, 415);
    assert.deepEqual(res.body.results.map((r: { original_name: string }) => r.original_name), ['café ü 日本.jpg', 'te%0Ax.jpg', 'x.jpg']);
  });

  it('refuses more than 1000 files, 50 fields or 1100 parts with 413 and stores nothing', async () => {
    const files = await post(repeatedParts(1001, FILE_PART));
    assert.deepEqual([files.status, files.body.detail], [413, 'reach files limit']);
    const fields = await post(repeatedParts(51, 'Content-Disposition: form-data; name="note"\r\n\r\ntext'));
    assert.deepEqual([fields.status, fields.body.detail], [413, 'reach fields limit']);
    const parts = await post(repeatedParts(1101, 'Content-Disposition: attachment\r\n\r\ntext'));
    assert.deepEqual([parts.status, parts.body.detail], [413, 'reach parts limit']);
    await nothingStored();
  });

  it('takes an empty body as a form without files (422) and a missing boundary as malformed (400)', async () => {
    const empty = await post({ payload: Buffer.alloc(0), headers: { 'content-type': 'multipart/form-data; boundary=abc' } });
    assert.equal(empty.status, 422);
    assert.deepEqual(empty.body.detail[0].loc, ['body', 'files']);
    const noBoundary = await post({ payload: Buffer.from(`--abc\r\n${FILE_PART}\r\n--abc--`), headers: { 'content-type': 'multipart/form-data' } });
    assert.equal(noBoundary.status, 400);
    assert.match(noBoundary.body.detail, /^Malformed multipart body: /);
    await nothingStored();
  });
});
