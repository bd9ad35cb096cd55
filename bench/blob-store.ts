/**
 * Blob store throughput (issue 27): PUT then GET of N generated objects of `size` bytes, `inFlight` at a time, through
 * the local store (a folder under /tmp), through the S3 store, and through a bare S3 client (PutObject/GetObject with
 * no store around it: what the store adds is the difference). The three take turns each round; medians of `rounds`.
 * Needs an S3 server: `scripts/s3-test-server.sh run npx tsx bench/blob-store.ts [objects=1000] [kb=100] [inFlight=16] [rounds=5]`
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../src/config.js';
import type { BlobStore } from '../src/storage/blob-store.js';
import { LocalBlobStore } from '../src/storage/local-blob-store.js';
import { S3BlobStore } from '../src/storage/s3-blob-store.js';
import { median } from './lib/server.js';

const count = Number(process.argv[2] ?? 1000);
const size = Number(process.argv[3] ?? 100) * 1024;
const inFlight = Number(process.argv[4] ?? 16);
const rounds = Number(process.argv[5] ?? 5);
if (!process.env.S3_ENDPOINT) {
  console.error('S3_ENDPOINT is not set: run it as scripts/s3-test-server.sh run npx tsx bench/blob-store.ts …');
  process.exit(1);
}

const BUCKET = 'versa-bench';
const config = loadConfig({ ...process.env, BLOB_STORE: `s3://${BUCKET}/bench` }).blobStore;
if (config.kind !== 's3') throw new Error('not an S3 configuration');
const client = new S3Client({
  region: config.region, endpoint: config.endpoint ?? undefined, forcePathStyle: config.forcePathStyle, credentials: config.credentials ?? undefined,
  requestChecksumCalculation: config.checksums, responseChecksumValidation: config.checksums,
});
await client.send(new CreateBucketCommand({ Bucket: BUCKET })).catch((err) => {
  if (err.name !== 'BucketAlreadyOwnedByYou') throw err;
});

const bodies = Array.from({ length: count }, () => randomBytes(size));
const key = (i: number) => `projects/1/images/${String(i).padStart(6, '0')}.jpg`;

async function pool(work: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < count) await work(next++);
  }));
  return count / ((performance.now() - started) / 1000);
}

interface Side { name: string; put(i: number): Promise<void>; get(i: number): Promise<number>; clear(): Promise<void> }

const storeSide = (name: string, store: BlobStore): Side => ({
  name,
  put: (i) => store.put(key(i), bodies[i]),
  get: async (i) => (await store.get(key(i))).length,
  clear: () => store.deletePrefix('projects/1'),
});

const localRoot = await mkdtemp(join(tmpdir(), 'versa-bench-blobs-'));
const bareKey = (i: number) => `bare/${key(i)}`;
const sides: Side[] = [
  storeSide('local store', new LocalBlobStore(localRoot)),
  storeSide('S3 store', new S3BlobStore(config)),
  {
    name: 'bare S3 client',
    put: async (i) => void (await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: bareKey(i), Body: bodies[i] }))),
    get: async (i) => (await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: bareKey(i) }))).Body!.transformToByteArray()).length,
    clear: () => new S3BlobStore({ ...config, prefix: '' }).deletePrefix('bare'),
  },
];

console.log(`${count} objects of ${size / 1024} KiB, ${inFlight} in flight, ${rounds} rounds\n`);
const results = new Map(sides.map((s) => [s.name, { put: [] as number[], get: [] as number[] }]));
for (let round = 0; round < rounds; round++) {
  for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
    const put = await pool((i) => side.put(i));
    const get = await pool(async (i) => {
      if ((await side.get(i)) !== size) throw new Error(`${side.name}: object ${i} came back with the wrong size`);
    });
    await side.clear();
    results.get(side.name)!.put.push(put);
    results.get(side.name)!.get.push(get);
  }
}
await rm(localRoot, { recursive: true, force: true });

console.log('| side | PUT objects/s | GET objects/s |\n|---|---|---|');
for (const [name, r] of results) console.log(`| ${name} | ${median(r.put).toFixed(0)} | ${median(r.get).toFixed(0)} |`);
client.destroy();
