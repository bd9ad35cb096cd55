/**
 * The S3 store against the local one (issue 27): upload ingest and the COCO and YOLO exports (which read every image
 * and write the archive to the store), through two in-process services on the same machine — one on a local folder,
 * one on the S3 server `scripts/s3-test-server.sh` starts (Ceph radosgw, sharing this machine's cores). Each round
 * runs both, first side alternating; the figure is the local time / the S3 time (target ≥ 0.8). Where the time goes:
 * each step's CPU seconds of this process (the service) and of the S3 server's daemons (radosgw, the OSD, the monitor),
 * read from /proc by the pid files in S3_TEST_SERVER_DIR.
 * Usage: scripts/s3-test-server.sh run npx tsx bench/store-ingest.ts [images=300] [perRequest=10] [inFlight=4] [rounds=3]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { forEachConcurrently } from '../src/lib/batches.js';
import { multipart } from '../test/helpers/multipart.js';
import { inProcessApp, median } from './lib/server.js';

const count = Number(process.argv[2] ?? 300);
const perRequest = Number(process.argv[3] ?? 10);
const inFlight = Number(process.argv[4] ?? 4);
const rounds = Number(process.argv[5] ?? 3);
const endpoint = process.env.S3_ENDPOINT;
if (!endpoint) throw new Error('S3_ENDPOINT is not set: run under scripts/s3-test-server.sh run');
const bucket = 'versa-bench-store';
const s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID!, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY! } });
await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((err) => {
  if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
});

// 1280×960 JPEGs, each different; multipart bodies encoded before any clock starts.
const images: Buffer[] = [];
for (let i = 0; i < count; i++) {
  const raw = Buffer.alloc(160 * 120 * 3);
  for (let p = 0; p < raw.length; p++) raw[p] = (p * (i + 7) * 2654435761) >>> 24;
  images.push(await sharp(raw, { raw: { width: 160, height: 120, channels: 3 } }).resize(1280, 960).jpeg({ quality: 85 }).toBuffer());
}
const bodies: ReturnType<typeof multipart>[] = [];
for (let i = 0; i < count; i += perRequest) bodies.push(multipart(images.slice(i, i + perRequest).map((data, k) => ({ filename: `img${i + k}.jpg`, data, contentType: 'image/jpeg' }))));
console.log(`${count} images (${(images.reduce((n, b) => n + b.length, 0) / 1e6).toFixed(1)} MB), ${perRequest} a request, ${inFlight} in flight, ${rounds} rounds`);

const sides = {
  local: await inProcessApp('store-local'),
  s3: await inProcessApp('store-s3', {
    BLOB_STORE: `s3://${bucket}/run-${Date.now()}`,
    ...Object.fromEntries(['S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE', 'S3_CHECKSUMS', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].map((k) => [k, process.env[k] ?? ''])),
  }),
};
type Side = keyof typeof sides;
type Step = 'ingest' | 'coco_zip' | 'yolo';

/** CPU seconds so far: this process, and the S3 server's daemons together. */
const serverDir = process.env.S3_TEST_SERVER_DIR;
const daemonPids = serverDir ? readdirSync(`${serverDir}/run`).filter((f) => f.endsWith('.pid')).map((f) => Number(readFileSync(`${serverDir}/run/${f}`, 'utf8'))) : [];
const ticks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 10 ms
};
function cpuNow(): { self: number; server: number } {
  const usage = process.cpuUsage();
  return { self: (usage.user + usage.system) / 1e6, server: daemonPids.reduce((sum, pid) => sum + ticks(pid), 0) };
}
const cpu: Record<Side, Record<Step, { self: number; server: number }[]>> = { local: { ingest: [], coco_zip: [], yolo: [] }, s3: { ingest: [], coco_zip: [], yolo: [] } };
async function timed(side: Side, step: Step, body: () => Promise<void>): Promise<void> {
  const [start, before] = [performance.now(), cpuNow()];
  await body();
  const after = cpuNow();
  times[side][step].push((performance.now() - start) / 1000);
  cpu[side][step].push({ self: after.self - before.self, server: after.server - before.server });
}
const times: Record<Side, Record<Step, number[]>> = { local: { ingest: [], coco_zip: [], yolo: [] }, s3: { ingest: [], coco_zip: [], yolo: [] } };

async function round(side: Side, n: number): Promise<void> {
  const { app, authorization } = sides[side];
  const project = (await app.inject({ method: 'POST', url: '/api/projects', headers: { authorization }, payload: { name: `r${n}`, project_type: 'object_detection' } })).json();
  await timed(side, 'ingest', () =>
    forEachConcurrently(bodies, inFlight, async (body) => {
      const res = await app.inject({ method: 'POST', url: `/api/projects/${project.id}/images`, headers: { ...body.headers, authorization }, payload: body.payload });
      if (res.statusCode !== 201) throw new Error(`${side} upload: ${res.statusCode} ${res.body}`);
    }),
  );
  for (const format of ['coco_zip', 'yolo'] as const) {
    await timed(side, format, async () => {
      const res = await app.inject({ method: 'POST', url: `/api/projects/${project.id}/export`, headers: { authorization }, payload: { format } });
      if (res.statusCode !== 200) throw new Error(`${side} ${format} export: ${res.statusCode} ${res.body}`);
    });
  }
}

for (let n = 0; n < rounds; n++) {
  const order: Side[] = n % 2 === 0 ? ['local', 's3'] : ['s3', 'local'];
  for (const side of order) await round(side, n);
  console.log(`round ${n + 1}: ` + (['ingest', 'coco_zip', 'yolo'] as const).map((k) => `${k} local ${times.local[k][n].toFixed(2)} s, s3 ${times.s3[k][n].toFixed(2)} s (${(times.local[k][n] / times.s3[k][n]).toFixed(2)}×)`).join('; '));
}
console.log('\n| step | local median (s) | S3 median (s) | ratio by round | local / S3 (medians) |\n|---|---:|---:|---|---:|');
for (const k of ['ingest', 'coco_zip', 'yolo'] as const) {
  const ratios = times.local[k].map((t, i) => (t / times.s3[k][i]).toFixed(2)).join(', ');
  console.log(`| ${k} | ${median(times.local[k]).toFixed(2)} | ${median(times.s3[k]).toFixed(2)} | ${ratios} | ${(median(times.local[k]) / median(times.s3[k])).toFixed(2)} |`);
}
const cpuMedian = (side: Side, k: Step, which: 'self' | 'server') => median(cpu[side][k].map((c) => c[which])).toFixed(2);
console.log('\n| step | local: service CPU (s) | S3: service CPU (s) | S3: server daemons CPU (s) |\n|---|---:|---:|---:|');
for (const k of ['ingest', 'coco_zip', 'yolo'] as const) console.log(`| ${k} | ${cpuMedian('local', k, 'self')} | ${cpuMedian('s3', k, 'self')} | ${cpuMedian('s3', k, 'server')} |`);
await sides.local.close();
await sides.s3.close();
