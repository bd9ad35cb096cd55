/**
 * Bucket import by reference (issue 27): N small JPEG objects put into a bucket of the S3 server, a project storage
 * attached on them (import by reference), and one sync timed from its 202 to the job's end; then a second sync of the
 * same bucket (nothing new: one listing per 1,000 objects). S3 requests are counted as the HTTP requests the process
 * sends to the S3 endpoint during each sync (Node's `http.client.request.start` channel): listings, GETs of the objects,
 * and nothing else (thumbnails go to Versa's own store, here the local one).
 * Needs an S3 server: scripts/s3-test-server.sh run npx tsx bench/bucket-import.ts [objects=10000] [size=640x480]
 */
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { forEachConcurrently } from '../src/lib/batches.js';
import { inProcessApp } from './lib/server.js';

const count = Number(process.argv[2] ?? 10_000);
const [width, height] = (process.argv[3] ?? '640x480').split('x').map(Number);
const endpoint = process.env.S3_ENDPOINT;
if (!endpoint) throw new Error('S3_ENDPOINT is not set: run under scripts/s3-test-server.sh run');
const credentials = { accessKeyId: process.env.AWS_ACCESS_KEY_ID!, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY! };
const bucket = 'versa-bench';
const prefix = `import-${Date.now()}`;

const s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((err) => {
  if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
});
const base = await sharp({ create: { width, height, channels: 3, background: { r: 90, g: 120, b: 150 } } }).raw().toBuffer();
let bytes = 0;
const putStart = performance.now();
await forEachConcurrently(Array.from({ length: count }, (_, i) => i), 16, async (i) => {
  // Distinct pictures (the object's number as 16 black or white bars across the top), so none duplicates another.
  const pixels = Buffer.from(base);
  const bar = Math.floor(width / 16);
  for (let y = 0; y < Math.min(40, height); y++) {
    for (let x = 0; x < bar * 16; x++) pixels.fill((i >> Math.floor(x / bar)) & 1 ? 255 : 0, (y * width + x) * 3, (y * width + x) * 3 + 3);
  }
  const body = await sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
  bytes += body.length;
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/img/${String(i).padStart(6, '0')}.jpg`, Body: body }));
});
console.log(`${count} objects of ${width}x${height} (${(bytes / 1e6).toFixed(1)} MB) put in ${((performance.now() - putStart) / 1000).toFixed(1)} s\n`);

const host = new URL(endpoint).host;
const requests = { list: 0, get: 0, other: 0 };
subscribe('http.client.request.start', (message) => {
  const request = (message as { request: ClientRequest }).request;
  if (request.host !== host.split(':')[0] && `${request.host}:${(request as unknown as { port?: string }).port}` !== host && request.getHeader('host') !== host) return;
  if (request.method === 'GET' && request.path.includes('list-type=2')) requests.list++;
  else if (request.method === 'GET') requests.get++;
  else requests.other++;
});

const { app, authorization, close } = await inProcessApp('bucket-import', { SECRETS_KEY: 'c'.repeat(64), STORAGE_ALLOWLIST: endpoint });
const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: { authorization }, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};
const project = await call('POST', '/api/projects', { name: 'bench' });
const storage = await call('POST', `/api/projects/${project.id}/storages`, {
  name: 'bench', endpoint, bucket, prefix, access_key_id: credentials.accessKeyId, secret_access_key: credentials.secretAccessKey, import_mode: 'reference',
});
const url = `/api/projects/${project.id}/storages/${storage.id}`;

async function sync(): Promise<{ s: number; counts: Record<string, number>; requests: typeof requests }> {
  Object.assign(requests, { list: 0, get: 0, other: 0 });
  const start = performance.now();
  const job = await call('POST', `${url}/sync`);
  for (;;) {
    const state = await call('GET', `/api/jobs/${job.job_id}`);
    if (state.status === 'failed' || state.status === 'cancelled') throw new Error(`sync ${state.status}: ${state.error}`);
    if (state.status === 'succeeded') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const s = (performance.now() - start) / 1000;
  return { s, counts: (await call('GET', url)).sync.counts, requests: { ...requests } };
}

const first = await sync();
const second = await sync();
console.log('| sync | objects | new | time (s) | objects/s | S3 list requests | S3 GETs | other S3 requests | requests per object |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const [name, run] of [['first', first], ['second', second]] as const) {
  const total = run.requests.list + run.requests.get + run.requests.other;
  console.log(`| ${name} | ${run.counts.listed} | ${run.counts.new} | ${run.s.toFixed(1)} | ${(run.counts.listed / run.s).toFixed(0)} | ${run.requests.list} | ${run.requests.get} | ${run.requests.other} | ${(total / run.counts.listed).toFixed(3)} |`);
}
const images = await app.inject({ method: 'GET', url: `/api/projects/${project.id}/images?limit=1`, headers: { authorization } });
console.log(`\nimages in the project: ${images.headers['x-total-count']}`);
await close();
s3.destroy();
