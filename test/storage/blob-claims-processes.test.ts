/**
 * Content-addressed blobs written by two processes at once (issue 27): the claims that keep a failing request from
 * removing bytes another request is about to record live in the database, so two processes see each other's. Each
 * "process" here has its own database connection and its own BlobClaims, as two API processes would; they share the
 * database and the blob store (the local folder, or the S3 server when S3_ENDPOINT is set).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BlobClaims, type ClaimTimes } from '../../src/storage/blob-claims.js';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { LocalBlobStore } from '../../src/storage/local-blob-store.js';
import { BlobClaimsRepository } from '../../src/modules/maintenance/blob-claims.repository.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { openTestDatabase } from '../helpers/test-app.js';
import { s3Skip, s3TestBucket, type TestBucket } from './s3-env.js';

const TIMES: ClaimTimes = { writeMs: 60_000, deleteMs: 60_000, pollMs: 5 };
const KEY = 'projects/1/images/0123abcd.jpg';
const BYTES = Buffer.from('the same bytes, written by both processes');

describe('blob claims across processes', () => {
  let dir: string;
  let first: DatabaseHandle;
  let second: DatabaseHandle;
  let drop: () => Promise<void>;
  let blobs: BlobStore;
  let bucket: TestBucket | undefined;
  let a: BlobClaims;
  let b: BlobClaims;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-claims-'));
    const opened = await openTestDatabase(dir);
    first = opened.database;
    second = await opened.reopen();
    drop = opened.drop;
    a = new BlobClaims(new BlobClaimsRepository(first.db), TIMES);
    b = new BlobClaims(new BlobClaimsRepository(second.db), TIMES);
    if (!s3Skip) {
      bucket = await s3TestBucket();
      blobs = new (await import('../../src/storage/s3-blob-store.js')).S3BlobStore(bucket.config);
    } else {
      blobs = new LocalBlobStore(join(dir, 'blobs'));
    }
  });

  after(async () => {
    await bucket?.empty();
    await first.close();
    await second.close();
    await drop();
    await rm(dir, { recursive: true, force: true });
  });

  const remove = (key: string) => blobs.delete(key);
  const notInUse = async () => false;

  it("a request that fails in one process leaves the bytes another process is writing and about to record", async () => {
    const winner = a.session();
    const loser = b.session();
    await winner.hold([KEY]);
    await loser.hold([KEY]);
    await Promise.all([blobs.put(KEY, BYTES), blobs.put(KEY, BYTES)]);
    // The loser's request fails before its row: it cleans up what it wrote, but the winner (process a) still writes.
    await b.removeUnlessUsed([KEY], notInUse, remove, loser);
    await loser.release();
    assert.deepEqual(await blobs.get(KEY), BYTES, 'the winner’s file is still there for its row');
    await winner.release();
    // Once nobody writes or refers to it, a removal takes it.
    await a.removeUnlessUsed([KEY], notInUse, remove);
    assert.equal(await blobs.size(KEY), null);
  });

  it('a removal under way in one process makes a writer in the other wait, so its bytes are written after it', async () => {
    let inUseAsked!: () => void;
    const asked = new Promise<void>((resolve) => (inUseAsked = resolve));
    let answer!: (used: boolean) => void;
    const inUse = () => {
      inUseAsked();
      return new Promise<boolean>((resolve) => (answer = resolve));
    };
    await blobs.put(KEY, BYTES);
    // Process b removes the file of a deleted image: it has recorded its claim and is checking the rows.
    const removal = b.removeUnlessUsed([KEY], inUse, remove);
    await asked;
    const writer = a.session();
    let held = false;
    const holding = writer.hold([KEY]).then(() => (held = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(held, false, 'the writer waits while the removal is under way');
    answer(false);
    await removal;
    await holding;
    // The removal saw the writer's claim (recorded before it looked) and kept the file; had it not, the writer would
    // still write only now, after the removal ended.
    await blobs.put(KEY, BYTES);
    await writer.release();
    assert.deepEqual(await blobs.get(KEY), BYTES, 'the writer’s bytes are there for its row');
  });

  it('a removal that sees a writer from the other process keeps the file, however the two interleave', async () => {
    for (let round = 0; round < 20; round++) {
      await blobs.put(KEY, BYTES);
      const writer = a.session();
      // Both sides start together: the writer claims then writes and records; the removal finds no row.
      let recorded = false;
      const write = (async () => {
        await writer.hold([KEY]);
        await blobs.put(KEY, BYTES);
        recorded = true;
        await writer.release();
      })();
      const removal = b.removeUnlessUsed([KEY], async () => recorded, remove);
      await Promise.all([write, removal]);
      assert.deepEqual(await blobs.get(KEY), BYTES, `round ${round}: the recorded bytes are there`);
    }
  });

  it("a crashed holder's expired claims stop counting and are cleared", async () => {
    const short = new BlobClaims(new BlobClaimsRepository(first.db), { ...TIMES, writeMs: 1 });
    const crashed = short.session();
    await crashed.hold([KEY]);
    await blobs.put(KEY, BYTES);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Never released (the process died): the claim expired, so the orphan goes.
    await b.removeUnlessUsed([KEY], notInUse, remove);
    assert.equal(await blobs.size(KEY), null);
    const left = await first.db.selectFrom('blob_claims').select('holder').execute();
    assert.deepEqual(left, [], 'every claim was released or cleared');
  });
});
