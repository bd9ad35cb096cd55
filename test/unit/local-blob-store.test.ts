import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { LocalBlobStore } from '../../src/storage/local-blob-store.js';

const root = await mkdtemp(join(tmpdir(), 'versa-blobs-'));
after(() => rm(root, { recursive: true, force: true }));
const store = new LocalBlobStore(root);

test('put makes missing folders, writes into existing ones, and leaves no temporary file', async () => {
  await store.put('projects/1/a.jpg', Buffer.from('first'));
  await store.put('projects/1/b.jpg', Buffer.from('second'));
  assert.equal((await store.get('projects/1/a.jpg')).toString(), 'first');
  assert.deepEqual((await readdir(join(root, 'projects/1'))).sort(), ['a.jpg', 'b.jpg']);
});

test('put recreates a folder that deletePrefix removed', async () => {
  await store.put('projects/2/thumbs/x.webp', Buffer.from('x'));
  await store.deletePrefix('projects/2');
  assert.equal(await store.size('projects/2/thumbs/x.webp'), null);
  await store.put('projects/2/thumbs/y.webp', Buffer.from('y'));
  assert.equal((await store.get('projects/2/thumbs/y.webp')).toString(), 'y');
});

test('putStream makes missing folders and counts the bytes', async () => {
  assert.equal(await store.putStream('exports/9/z.bin', Readable.from([Buffer.alloc(10), Buffer.alloc(5)])), 15);
  assert.equal(await store.size('exports/9/z.bin'), 15);
});

test('keys that leave the root are refused', async () => {
  await assert.rejects(store.put('../escape', Buffer.from('x')));
});
