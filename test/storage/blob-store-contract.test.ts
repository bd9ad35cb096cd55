/**
 * One contract for every BlobStore: the local folder always, S3 when S3_ENDPOINT names a server (`npm run test:s3`
 * starts one: scripts/s3-test-server.sh). Each store is checked for what it leaves behind as well as what it serves.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { LocalBlobStore } from '../../src/storage/local-blob-store.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import { s3Skip, s3TestBucket } from './s3-env.js';

const MiB = 1024 * 1024;
/** The S3 store's part size here: S3's least, so that 20 MiB is a four-part upload. */
const PART = 5 * MiB;

interface Harness {
  store: BlobStore;
  /** Whatever the store keeps besides its objects: temporary files, unfinished multipart uploads. */
  debris(): Promise<string[]>;
  /** Begins a write of `key` and leaves it unfinished, as a process killed mid-write does. */
  leaveUnfinished(key: string): Promise<void>;
  /** How many parts the object was uploaded in (S3 only: its ETag says). */
  parts?(key: string): Promise<number>;
  close(): Promise<void>;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The keys and sizes under `prefix/`, sorted; every one written within the last minute. */
async function keys(store: BlobStore, prefix: string): Promise<Array<[string, number]>> {
  const found: Array<[string, number]> = [];
  for await (const { key, size, modifiedMs } of store.list(prefix)) {
    assert.ok(Math.abs(Date.now() - modifiedMs) < 60_000, `${key} was written at ${new Date(modifiedMs).toISOString()}`);
    found.push([key, size]);
  }
  return found.sort(([a], [b]) => a.localeCompare(b));
}

/** A stream of `total` random bytes in 1 MiB chunks that fails after `failAfter` bytes, when given. */
function source(total: number, failAfter?: number): { stream: Readable; sent: Buffer[] } {
  const sent: Buffer[] = [];
  let offset = 0;
  const stream = new Readable({
    read() {
      if (failAfter !== undefined && offset >= failAfter) return this.destroy(new Error('the client went away'));
      if (offset >= total) return this.push(null);
      const chunk = randomBytes(Math.min(MiB, total - offset));
      offset += chunk.length;
      sent.push(chunk);
      this.push(chunk);
    },
  });
  return { stream, sent };
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

function contract(name: string, skip: string | false, open: () => Promise<Harness>): void {
  describe(`${name} blob store`, { skip }, () => {
    let h: Harness;
    let store: BlobStore;
    before(async () => {
      h = await open();
      store = h.store;
    });
    after(() => h?.close());

    it('put then get, stream and size give back the same bytes; content hashes match', async () => {
      const data = randomBytes(3 * MiB + 17);
      await store.put('projects/1/images/a.jpg', data);
      assert.equal(sha256(await store.get('projects/1/images/a.jpg')), sha256(data));
      assert.equal(sha256(await collect(store.stream('projects/1/images/a.jpg'))), sha256(data));
      assert.equal(await store.size('projects/1/images/a.jpg'), data.length);
      await store.put('projects/1/images/empty.jpg', Buffer.alloc(0));
      assert.equal(await store.size('projects/1/images/empty.jpg'), 0);
      assert.equal((await store.get('projects/1/images/empty.jpg')).length, 0);
    });

    it('streams a byte range, both ends included', async () => {
      const data = randomBytes(1000);
      await store.put('projects/1/samples/r.wav', data);
      assert.deepEqual(await collect(store.stream('projects/1/samples/r.wav', { start: 10, end: 19 })), data.subarray(10, 20));
      assert.deepEqual(await collect(store.stream('projects/1/samples/r.wav', { start: 999, end: 999 })), data.subarray(999));
      assert.deepEqual(await collect(store.stream('projects/1/samples/r.wav', { start: 0, end: 0 })), data.subarray(0, 1));
    });

    it('a missing key: size null, get and stream fail with ENOENT, delete is a no-op', async () => {
      assert.equal(await store.size('projects/1/images/none.jpg'), null);
      await assert.rejects(store.get('projects/1/images/none.jpg'), isMissing);
      await assert.rejects(collect(store.stream('projects/1/images/none.jpg')), isMissing);
      await store.delete('projects/1/images/none.jpg');
    });

    it('delete removes one object; a second put replaces the first whole', async () => {
      await store.put('projects/1/exports/x.zip', Buffer.from('first version'));
      await store.put('projects/1/exports/x.zip', Buffer.from('second'));
      assert.equal((await store.get('projects/1/exports/x.zip')).toString(), 'second');
      await store.delete('projects/1/exports/x.zip');
      assert.equal(await store.size('projects/1/exports/x.zip'), null);
    });

    it('list and deletePrefix take every key under prefix/, across pages, and nothing beside it', async () => {
      const inside = ['projects/2/a', 'projects/2/b', 'projects/2/thumbs/c.webp', 'projects/2/versions/1/train/d.jpg', 'projects/2/versions/1/valid/e.jpg', 'projects/2/x.y', 'projects/2/z'];
      for (const [i, key] of inside.entries()) await store.put(key, Buffer.alloc(i));
      await store.put('projects/20/a', Buffer.from('beside'));
      assert.deepEqual(await keys(store, 'projects/2'), inside.map((key, i) => [key, i]));
      assert.deepEqual(await keys(store, 'projects/2/versions/1'), [['projects/2/versions/1/train/d.jpg', 3], ['projects/2/versions/1/valid/e.jpg', 4]]);
      assert.deepEqual(await keys(store, 'projects/3'), []);
      await store.deletePrefix('projects/2');
      assert.deepEqual(await keys(store, 'projects/2'), []);
      for (const key of inside) assert.equal(await store.size(key), null);
      assert.equal((await store.get('projects/20/a')).toString(), 'beside');
    });

    it('keys that are not the store\'s own form are refused before anything is touched', async () => {
      for (const key of ['../escape', 'projects/1/../../x', '/abs', 'projects//x', 'projects/1/a b']) {
        assert.throws(() => store.stream(key));
        await assert.rejects(store.put(key, Buffer.from('x')));
        await assert.rejects(store.size(key));
      }
    });

    it('putStream counts the bytes; a small stream and an empty one are whole objects too', async () => {
      const small = source(300_000);
      assert.equal(await store.putStream('projects/4/exports/small.zip', small.stream), 300_000);
      assert.equal(sha256(await store.get('projects/4/exports/small.zip')), sha256(Buffer.concat(small.sent)));
      assert.equal(await store.putStream('projects/4/exports/empty.zip', Readable.from([])), 0);
      assert.equal(await store.size('projects/4/exports/empty.zip'), 0);
    });

    it('a large stream goes up whole (multipart on S3) and reads back with the same hash', async () => {
      const big = source(20 * MiB + 12345);
      assert.equal(await store.putStream('projects/4/models/big.onnx', big.stream), 20 * MiB + 12345);
      const sent = Buffer.concat(big.sent);
      assert.equal(await store.size('projects/4/models/big.onnx'), sent.length);
      assert.equal(sha256(await collect(store.stream('projects/4/models/big.onnx'))), sha256(sent));
      const tail = await collect(store.stream('projects/4/models/big.onnx', { start: 20 * MiB, end: sent.length - 1 }));
      assert.deepEqual(tail, sent.subarray(20 * MiB));
      if (h.parts) assert.equal(await h.parts('projects/4/models/big.onnx'), 5);
      assert.deepEqual(await h.debris(), []);
    });

    it('an interrupted streamed upload leaves nothing, and the object it would have replaced stays', async () => {
      await store.put('projects/5/exports/kept.zip', Buffer.from('the old export'));
      // Past two parts on S3, so that the multipart upload has parts to abort.
      const cut = source(30 * MiB, 12 * MiB);
      await assert.rejects(store.putStream('projects/5/exports/kept.zip', cut.stream), /went away/);
      const fresh = source(30 * MiB, 7 * MiB);
      await assert.rejects(store.putStream('projects/5/exports/new.zip', fresh.stream), /went away/);
      assert.equal((await store.get('projects/5/exports/kept.zip')).toString(), 'the old export');
      assert.equal(await store.size('projects/5/exports/new.zip'), null);
      assert.deepEqual(await keys(store, 'projects/5'), [['projects/5/exports/kept.zip', 14]]);
      assert.deepEqual(await h.debris(), []);
    });

    it('removeUnfinishedWrites takes what a crash left unfinished before the cutoff, never a later write', async () => {
      await h.leaveUnfinished('projects/7/exports/crashed.zip');
      await h.leaveUnfinished('projects/7/models/crashed.onnx');
      await store.put('projects/7/exports/done.zip', Buffer.from('whole'));
      assert.equal((await h.debris()).length, 2);
      assert.equal(await store.removeUnfinishedWrites(Date.now() - 60_000), 0);
      assert.equal((await h.debris()).length, 2);
      assert.equal(await store.removeUnfinishedWrites(Date.now() + 1000), 2);
      assert.deepEqual(await h.debris(), []);
      assert.deepEqual(await keys(store, 'projects/7'), [['projects/7/exports/done.zip', 5]]);
    });

    it('concurrent writers of one key: every read sees one writer\'s whole object, the last one stays', async () => {
      const key = 'projects/6/images/same.jpg';
      const streamed = [source(PART + 3 * MiB), source(PART + MiB)];
      const buffers = [randomBytes(2 * MiB), randomBytes(MiB)];
      const reads: string[] = [];
      let writing = true;
      const reader = (async () => {
        while (writing) {
          const read = await store.get(key).catch((err) => (isMissing(err) ? null : Promise.reject(err)));
          if (read) reads.push(sha256(read));
        }
      })();
      await Promise.all([...streamed.map((s) => store.putStream(key, s.stream)), ...buffers.map((b) => store.put(key, b))]);
      writing = false;
      await reader;
      const whole = new Set([...streamed.map((s) => sha256(Buffer.concat(s.sent))), ...buffers.map(sha256)]);
      assert.ok(reads.length > 0);
      for (const read of reads) assert.ok(whole.has(read), 'a read saw bytes no writer wrote whole');
      assert.ok(whole.has(sha256(await store.get(key))));
      assert.deepEqual(await h.debris(), []);
    });
  });
}

contract('local', false, async () => {
  const root = await mkdtemp(join(tmpdir(), 'versa-contract-'));
  return {
    store: new LocalBlobStore(root),
    debris: async () => (await readdir(root, { recursive: true })).filter((name) => name.endsWith('.tmp')),
    leaveUnfinished: async (key) => {
      const temp = join(root, `${key}.${randomBytes(6).toString('hex')}.tmp`);
      await mkdir(dirname(temp), { recursive: true });
      await writeFile(temp, 'half an obj');
    },
    close: () => rm(root, { recursive: true, force: true }),
  };
});

contract('S3', s3Skip, async () => {
  const bucket = await s3TestBucket();
  // Pages of 3 keys, so that listing and deleting go across pages.
  const store = new S3BlobStore(bucket.config, { partSize: PART, pageSize: 3 });
  return {
    store,
    debris: bucket.unfinishedUploads,
    leaveUnfinished: async (key) => {
      const Key = `${bucket.config.prefix}/${key}`;
      const { UploadId } = await bucket.client.send(new CreateMultipartUploadCommand({ Bucket: bucket.config.bucket, Key }));
      await bucket.client.send(new UploadPartCommand({ Bucket: bucket.config.bucket, Key, UploadId, PartNumber: 1, Body: Buffer.from('half an obj') }));
    },
    parts: async (key) => Number(/-(\d+)"?$/.exec(await bucket.etag(key))?.[1] ?? 1),
    close: bucket.empty,
  };
});

describe('S3 blob store on a bucket that does not exist', { skip: s3Skip }, () => {
  it('says so instead of reporting a missing blob', async () => {
    const bucket = await s3TestBucket();
    const store = new S3BlobStore({ ...bucket.config, bucket: 'versa-no-such-bucket' });
    await assert.rejects(store.get('projects/1/images/a.jpg'), (err: Error) => err.name === 'NoSuchBucket' && !isMissing(err));
    await assert.rejects(store.put('projects/1/images/a.jpg', Buffer.from('x')), { name: 'NoSuchBucket' });
    await bucket.empty();
  });
});
