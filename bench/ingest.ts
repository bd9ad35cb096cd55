/**
 * Upload ingest (issue 2): N generated 1280×960 JPEGs (a) through a bare sharp loop doing the same work as an upload —
 * sha256, header read, EXIF-oriented 256 px WebP thumbnail (same settings), original and thumbnail written to disk —
 * four at a time so both cores are busy; (b) uploaded through the API of a server running as its own process, with
 * a few requests in flight. Rounds alternate which side goes first. Target: API ≥ 0.9× the bare loop.
 * The multipart bodies are encoded before the clock starts and sent with node:http: a real client runs on another
 * machine, and here undici's FormData encoding took about 2 ms of CPU per image away from the server's two cores
 * (0.3 ms once pre-encoded), which measured the client, not the service. The server's CPU time per image is printed
 * beside the bare loop's so the per-image overhead of the service is visible on its own.
 * Usage: npx tsx bench/ingest.ts [images=1000] [filesPerRequest=10] [requestsInFlight=4] [rounds=3]
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { configureSharp } from '../src/imaging/sharp-config.js';
import { generateShapesImage } from '../src/synthetic/index.js';
import { blobOf, median, startServer } from './lib/server.js';

const count = Number(process.argv[2] ?? 1000);
const perRequest = Number(process.argv[3] ?? 10);
const inFlight = Number(process.argv[4] ?? 4);
const rounds = Number(process.argv[5] ?? 3);

configureSharp(); // the bare loop runs with the server's sharp settings
console.log(`generating ${count} 1280×960 JPEGs…`);
const images: Buffer[] = [];
for (let i = 0; i < count; i++) images.push((await generateShapesImage({ seed: `ingest/${i}`, width: 1280, height: 960, masks: false })).data);
const megabytes = images.reduce((sum, b) => sum + b.length, 0) / 1e6;
console.log(`${megabytes.toFixed(1)} MB in all\n`);

async function pool<T>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index], index);
      }
    }),
  );
}

/** One upload request's body, encoded by the standard FormData encoder. */
async function encodeBatch(batch: Buffer[], b: number): Promise<{ type: string; body: Buffer }> {
  const form = new FormData();
  batch.forEach((data, k) => form.append('files', blobOf(data), `img-${b}-${k}.jpg`));
  const request = new Request('http://encode.invalid/', { method: 'POST', body: form });
  return { type: request.headers.get('content-type')!, body: Buffer.from(await request.arrayBuffer()) };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
function post(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU milliseconds (user + system, all threads) a process has used so far. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * Every folder either side writes stays until the end. ext4 skips inodes deleted in the last minutes when it
 * allocates new ones (one inode-table lookup per skipped inode), so a side that created its files right after the
 * other deleted a thousand paid for that deletion: in a profile of the server that was 0.45 ms per image in
 * find_inode_bit/recently_deleted, charged to whichever side happened to run second.
 */
const written: string[] = [];

const bareCpu: number[] = [];
const apiCpu: number[] = [];
const clientCpu: number[] = [];

/** Both sides do a few images untimed first, so neither pays its JIT and first-use costs inside the clock. */
const WARM_UP = 40;

async function bareLoop(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'versa-bench-bare-'));
  await mkdir(join(dir, 'warm-up', 'thumbs'), { recursive: true });
  await mkdir(join(dir, 'timed', 'thumbs'), { recursive: true });
  await pool(images.slice(0, WARM_UP), 4, (data) => bareImage(data, join(dir, 'warm-up')));
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  await pool(images, 4, (data) => bareImage(data, join(dir, 'timed')));
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  bareCpu.push((cpu.user + cpu.system) / 1000 / count);
  written.push(dir);
  return count / seconds;
}

/** What the upload route does to one image: hash, header, thumbnail, both files written. */
async function bareImage(data: Buffer, dir: string): Promise<void> {
  const sha = createHash('sha256').update(data).digest('hex');
  await sharp(data).metadata();
  const thumb = await sharp(data).autoOrient().resize(256, 256, { fit: 'inside', withoutEnlargement: true }).webp({ effort: 2 }).toBuffer();
  await writeFile(join(dir, `${sha}.jpg`), data);
  await writeFile(join(dir, 'thumbs', `${sha}.webp`), thumb);
}

async function throughApi(): Promise<number> {
  const server = await startServer();
  try {
    const warmUp = await server.api('POST', '/api/projects', { name: 'ingest bench warm-up' });
    const project = await server.api('POST', '/api/projects', { name: 'ingest bench' });
    const batches: Buffer[][] = [];
    for (let i = 0; i < images.length; i += perRequest) batches.push(images.slice(i, i + perRequest));
    const encoded = await Promise.all(batches.map(encodeBatch));
    await pool(encoded.slice(0, WARM_UP / perRequest), inFlight, async ({ type, body }) => {
      await post(`${server.url}/api/projects/${warmUp.id}/images`, { authorization: `Bearer ${server.token}`, 'content-type': type }, body);
    });
    const url = `${server.url}/api/projects/${project.id}/images`;
    const start = performance.now();
    const cpu0 = cpuMs(server.pid);
    const client0 = process.cpuUsage();
    await pool(encoded, inFlight, async ({ type, body }, b) => {
      const res = await post(url, { authorization: `Bearer ${server.token}`, 'content-type': type }, body);
      const created = res.status === 201 ? JSON.parse(res.text).created : -1;
      if (created !== batches[b].length) throw new Error(`upload answered ${res.status}: ${res.text.slice(0, 300)}`);
    });
    const seconds = (performance.now() - start) / 1000;
    apiCpu.push((cpuMs(server.pid) - cpu0) / count);
    const client = process.cpuUsage(client0);
    clientCpu.push((client.user + client.system) / 1000 / count);
    return count / seconds;
  } finally {
    await server.stop();
    written.push(server.dataDir);
  }
}

const bare: number[] = [];
const api: number[] = [];
for (let round = 0; round < rounds; round++) {
  if (round % 2 === 0) {
    bare.push(await bareLoop());
    api.push(await throughApi());
  } else {
    api.push(await throughApi());
    bare.push(await bareLoop());
  }
}
await Promise.all(written.map((dir) => rm(dir, { recursive: true, force: true })));
console.log('| round | bare sharp loop images/s | API upload images/s | ratio | bare CPU ms/image | server CPU ms/image | client CPU ms/image |');
console.log('|---|---|---|---|---|---|---|');
for (let i = 0; i < rounds; i++) {
  console.log(`| ${i + 1} | ${bare[i].toFixed(1)} | ${api[i].toFixed(1)} | ${(api[i] / bare[i]).toFixed(2)} | ${bareCpu[i].toFixed(2)} | ${apiCpu[i].toFixed(2)} | ${clientCpu[i].toFixed(2)} |`);
}
console.log(
  `\nmedian: bare ${median(bare).toFixed(1)} images/s, API ${median(api).toFixed(1)} images/s, ratio of medians ${(median(api) / median(bare)).toFixed(2)}, ` +
    `median of per-round ratios ${median(api.map((a, i) => a / bare[i])).toFixed(2)} ` +
    `(target ≥ 0.9; ${perRequest} files per request, ${inFlight} requests in flight)`,
);
