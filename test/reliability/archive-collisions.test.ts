/**
 * Issue 24, item 10: an archive whose entries land on each other (two entries of one name, a name used for a file and
 * a folder) or that the file system cannot extract answered with raw errno text and the server's temporary folder
 * ("corrupt zip archive: EEXIST: file already exists, open 'versa-import-…/a0.png'"; the sample import gave the
 * absolute path). Now the answer says what is wrong with the archive, and the import leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 90, g: 120, b: 200 } } }).png().toBuffer();

describe('archive entries that collide', () => {
  let t: TestApp;
  let alice: User;
  before(async () => {
    t = await startTestApp();
    alice = await t.user();
  });
  after(() => t.close());

  const send = async (url: string, entries: ZipEntry[], fields: Record<string, string> = {}) => {
    const { payload, headers } = multipart([{ name: 'file', filename: 'dataset.zip', data: await buildZip(entries), contentType: 'application/zip' }], fields);
    return alice.request({ method: 'POST', url, payload, headers });
  };
  /** A user-level answer: no errno code, no syscall wording, no server folder. */
  const assertPlain = (body: unknown) => {
    const text = JSON.stringify(body);
    assert.doesNotMatch(text, /E[A-Z]{3,}:|file already exists|open '|mkdir '/, text);
    assert.ok(!text.includes(t.dataDir) && !/versa-|\/tmp\//.test(text), `no server path in ${text}`);
  };

  it('a dataset import names the colliding entries, never EEXIST or a server path, and stores nothing', async () => {
    const cases: [ZipEntry[], RegExp][] = [
      [[{ name: 'a0.png', data: png }, { name: 'a0.png', data: png }], /the archive holds two entries named "a0\.png"/],
      [[{ name: 'images/a0.png', data: png }, { name: 'images/a0.png/b.png', data: png }], /the archive holds both a file and a folder named "images\/a0\.png"/],
      [[{ name: 'd/b.png', data: png }, { name: 'd', data: png }], /the archive holds both a file and a folder named "d"/],
      [[{ name: `${'x'.repeat(300)}.png`, data: png }], /zip entry "x+\.png" has a name or folder name too long to extract/],
    ];
    for (const [entries, expected] of cases) {
      const res = await send('/api/projects/import', entries);
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.match(res.body.detail, expected);
      assertPlain(res.body);
    }
    assert.deepEqual((await alice.get('/api/projects')).body, []);
    assert.deepEqual(await readdir(join(t.dataDir, 'blobs', 'projects')).catch(() => []), []);
    assert.deepEqual(await readdir(join(t.dataDir, 'tmp')).catch(() => []), []);
  });

  it('an import into a project and a sample import say the same', async () => {
    const project = await alice.post('/api/projects', { name: 'target', project_type: 'object_detection' });
    const into = await send(`/api/projects/${project.body.id}/import`, [{ name: 'a0.png', data: png }, { name: 'a0.png', data: png }]);
    assert.equal(into.status, 422, JSON.stringify(into.body));
    assert.match(into.body.detail, /two entries named "a0\.png"/);
    assertPlain(into.body);

    const samples = await send(`/api/projects/${project.body.id}/import/jsonl`, [
      { name: 'clips.jsonl', data: '{"file": "a.wav"}\n' },
      { name: 'a.wav', data: 'x' },
      { name: 'a.wav', data: 'y' },
    ], { modality: 'audio' });
    assert.equal(samples.status, 422, JSON.stringify(samples.body));
    assert.match(JSON.stringify(samples.body.detail), /two entries named \\"a\.wav\\"/);
    assertPlain(samples.body);
    assert.equal((await alice.get(`/api/projects/${project.body.id}`)).body.image_count, 0);
    assert.deepEqual((await alice.get(`/api/projects/${project.body.id}/samples`)).body, []);
  });
});
