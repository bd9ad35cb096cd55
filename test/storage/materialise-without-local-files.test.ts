/** A store with no local files (S3) still gives the trainers their folder: materialise copies what it cannot link. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { LocalBlobStore } from '../../src/storage/local-blob-store.js';
import { materialiseVersion, type MaterialVersion } from '../../src/training/materialise.js';

const root = await mkdtemp(join(tmpdir(), 'versa-materialise-'));
after(() => rm(root, { recursive: true, force: true }));
const local = new LocalBlobStore(join(root, 'blobs'));
/** The same objects without localPath, as the S3 store offers them. */
const remote: BlobStore = Object.defineProperty(new LocalBlobStore(join(root, 'blobs')), 'localPath', { value: undefined });

it('links from the local store, copies from a store without local files; the bytes are the same', async () => {
  await local.put('projects/1/images/a.jpg', Buffer.from('image a'));
  await local.put('projects/1/images/b.jpg', Buffer.from('image b'));
  const version: MaterialVersion = {
    task: 'detect', names: ['thing'],
    images: [
      { split: 'train', filename: 'a.jpg', blobKey: 'projects/1/images/a.jpg', width: 10, height: 10, boxes: [[0, 1, 1, 2, 2]], label: null },
      { split: 'valid', filename: 'b.jpg', blobKey: 'projects/1/images/b.jpg', width: 10, height: 10, boxes: [], label: null },
    ],
  };
  const linked = await materialiseVersion(local, version, join(root, 'linked'));
  const copied = await materialiseVersion(remote, version, join(root, 'copied'));
  assert.deepEqual([linked.linked, linked.copied, copied.linked, copied.copied], [2, 0, 0, 2]);
  assert.equal((await stat(join(root, 'linked/images/train/a.jpg'))).nlink, 2);
  assert.equal((await stat(join(root, 'copied/images/train/a.jpg'))).nlink, 1);
  for (const file of ['images/train/a.jpg', 'images/valid/b.jpg', 'labels/train/a.txt', 'dataset.json']) {
    assert.deepEqual(await readFile(join(root, 'copied', file), 'utf8'), (await readFile(join(root, 'linked', file), 'utf8')).replaceAll(join(root, 'linked'), join(root, 'copied')));
  }
});
