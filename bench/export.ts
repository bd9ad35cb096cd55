/**
 * Export through the service (database → writer → blob store), on rows seeded straight into the database:
 *   1. COCO JSON of N images / 10·N box annotations (default 100k / 1M), `rounds` times: wall time, peak RSS sampled
 *      during the export, and the longest event-loop stall (monitorEventLoopDelay) — targets < 10 s, < 500 MB, < 50 ms.
 *   2. YOLO zip of M images (default 2,000 distinct ~150 KB JPEG blobs) against `zip -0 -r` over the same blob files
 *      (target ≥ 0.8× zip's speed). Medians of `rounds`, alternating which goes first.
 * Runs under the server's node flags (bench/lib/server.ts, SERVER_NODE_FLAGS), re-starting itself with them if needed.
 * SQLite by default; DATABASE_URL=postgres://… runs it on PostgreSQL (a fresh schema would be needed; use a fresh db).
 * Usage: npx tsx bench/export.ts [images=100000] [zipImages=2000] [rounds=3]
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import sharp from 'sharp';
import type { Caller } from '../src/access/caller.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Db } from '../src/db/database.js';
import { ExportsRepository } from '../src/modules/exports/exports.repository.js';
import { ExportsService } from '../src/modules/exports/exports.service.js';
import { Metrics } from '../src/lib/metrics.js';
import { withServerNodeFlags } from './lib/server.js';

// The service runs in this process, so this process gets the server's node flags.
await withServerNodeFlags();

const imageCount = Number(process.argv[2] ?? 100_000);
const zipImages = Number(process.argv[3] ?? 2_000);
const rounds = Number(process.argv[4] ?? 3);
const CLASSES = ['car', 'bus', 'truck', 'person', 'bicycle'];

const dataDir = await mkdtemp(join(tmpdir(), 'versa-bench-export-'));
const versa = await buildApp(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL ?? '', LOG_LEVEL: 'silent' }), { logger: false });
const { db, blobs, access } = versa.deps;
const service = new ExportsService(new ExportsRepository(db), access, blobs, new Metrics());

try {
  const now = new Date().toISOString();
  const user = await db.insertInto('users').values({ email: 'bench@example.com', password_hash: 'x', display_name: 'bench', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const caller: Caller = { userId: user.id, email: 'bench@example.com', isAdmin: false, tokenId: 0, tokenKind: 'api', via: 'bearer', scope: 'read-write' };

  // 1. COCO: every image row points at one small blob (COCO JSON never opens the images). The seeding's garbage is
  // collected first, so the stalls measured are the export's own (once only: repeated forced collections shrink the
  // heap's growing factor, and the exports after them then spend most of their time in full collections).
  const coco = await seedProject(db, user.id, 'coco bench', imageCount, 10, () => 'projects/bench/one.jpg');
  const cocoRuns: { seconds: number; cpuSeconds: number; peakRss: number; maxBlockMs: number; out: Awaited<ReturnType<ExportsService['export']>> }[] = [];
  collectGarbage();
  for (let round = 0; round < rounds; round++) {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    delay.enable();
    const started = performance.now();
    const cpu = process.cpuUsage();
    const out = await service.export(caller, coco, { format: 'coco', include_unannotated: true });
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    delay.disable();
    clearInterval(sampler);
    cocoRuns.push({ seconds, cpuSeconds: (used.user + used.system) / 1e6, peakRss, maxBlockMs: delay.max / 1e6, out });
  }
  console.log('| export | round | images | annotations | seconds | CPU seconds | output MB | peak RSS MB | max event-loop block ms |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  cocoRuns.forEach(({ seconds, cpuSeconds, peakRss, maxBlockMs, out }, i) => {
    console.log(
      `| coco (service) | ${i + 1} | ${out.image_count} | ${out.annotation_count} | ${seconds.toFixed(2)} | ${cpuSeconds.toFixed(2)} | ${(out.size_bytes / 1e6).toFixed(1)} | ${(peakRss / 1e6).toFixed(0)} | ${maxBlockMs.toFixed(1)} |`,
    );
  });
  console.log(
    `\ncoco median: ${median(cocoRuns.map((r) => r.seconds)).toFixed(2)} s, peak RSS ${(Math.max(...cocoRuns.map((r) => r.peakRss)) / 1e6).toFixed(0)} MB, ` +
      `event-loop block median ${median(cocoRuns.map((r) => r.maxBlockMs)).toFixed(1)} ms / worst ${Math.max(...cocoRuns.map((r) => r.maxBlockMs)).toFixed(1)} ms ` +
      '(targets < 10 s, < 500 MB, < 50 ms)\n',
  );

  // 2. YOLO: distinct JPEG blobs (noise makes each as large as a photo), exported vs `zip -0 -r` over the same files.
  const jpeg = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg({ quality: 85 }).toBuffer();
  const yolo = await seedProject(db, user.id, 'yolo bench', zipImages, 10, (i) => `projects/bench/images/img_${i}.jpg`);
  for (let i = 1; i <= zipImages; i++) await blobs.put(`projects/bench/images/img_${i}.jpg`, jpeg);
  const yoloTimes: number[] = [];
  const zipTimes: number[] = [];
  let zipMissing = false;
  const timeYolo = async () => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const heap = process.memoryUsage();
    await service.export(caller, yolo, { format: 'yolo', include_unannotated: true });
    yoloTimes.push((performance.now() - start) / 1000);
    const used = process.cpuUsage(cpu);
    if (process.env.BENCH_DEBUG) console.log(`yolo: wall ${(performance.now() - start).toFixed(0)} ms, cpu user ${(used.user / 1000).toFixed(0)} sys ${(used.system / 1000).toFixed(0)} ms, heap ${(heap.heapUsed / 1e6).toFixed(0)} MB, external ${(heap.external / 1e6).toFixed(0)} MB, arrayBuffers ${(heap.arrayBuffers / 1e6).toFixed(0)} MB`);
  };
  const timeZip = () => {
    const target = join(dataDir, 'plain.zip');
    spawnSync('rm', ['-f', target]);
    const start = performance.now();
    zipMissing = spawnSync('zip', ['-0', '-r', '-q', target, 'images'], { cwd: join(dataDir, 'blobs/projects/bench') }).error !== undefined;
    zipTimes.push((performance.now() - start) / 1000);
  };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      await timeYolo();
      timeZip();
    } else {
      timeZip();
      await timeYolo();
    }
  }
  console.log();
  console.log(`| zip (median of ${rounds}) | images | seconds |`);
  console.log('|---|---|---|');
  console.log(`| yolo export (service) | ${zipImages} | ${median(yoloTimes).toFixed(2)} (${yoloTimes.map((t) => t.toFixed(2)).join(', ')}) |`);
  if (zipMissing) console.log('`zip` is not installed; no baseline');
  else {
    console.log(`| zip -0 -r | ${zipImages} | ${median(zipTimes).toFixed(2)} (${zipTimes.map((t) => t.toFixed(2)).join(', ')}) |`);
    console.log(`\nyolo export speed = ${(median(zipTimes) / median(yoloTimes)).toFixed(2)}× zip -0 (target ≥ 0.8×)`);
  }
} finally {
  await versa.app.close();
  await rm(dataDir, { recursive: true, force: true });
}

/** A project with `images` rows and `perImage` boxes each, written in large transactions. */
async function seedProject(db: Db, ownerId: number, name: string, images: number, perImage: number, blobKey: (i: number) => string): Promise<number> {
  const now = new Date().toISOString();
  const project = await db.insertInto('projects').values({ owner_id: ownerId, name, description: '', location: '', project_type: 'object_detection', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
  const classIds: number[] = [];
  for (const className of CLASSES) {
    classIds.push((await db.insertInto('classes').values({ project_id: project.id, name: className, color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow()).id);
  }
  const BATCH = 2_000;
  for (let first = 1; first <= images; first += BATCH) {
    await db.transaction().execute(async (trx) => {
      const rows = [];
      for (let i = first; i < Math.min(first + BATCH, images + 1); i++) {
        rows.push({
          project_id: project.id, filename: `img_${i}.jpg`, original_name: `img_${i}.jpg`, width: 640, height: 480,
          split: i % 10 === 0 ? 'valid' : 'train', sha256: `${name}-${i}`, mime_type: 'image/jpeg', size_bytes: 1,
          blob_key: blobKey(i), thumbnail_key: 'projects/bench/thumb.webp', annotation_count: perImage, created_at: now,
        });
      }
      const ids: { id: number }[] = [];
      for (let k = 0; k < rows.length; k += 500) ids.push(...(await trx.insertInto('images').values(rows.slice(k, k + 500)).returning('id').execute()));
      const annotations = [];
      for (const { id } of ids) {
        for (let k = 0; k < perImage; k++) {
          const geometry = JSON.stringify({ x: (id * 37 + k * 53) % 600, y: (id * 11 + k * 29) % 440, width: 5 + ((id + k) % 35), height: 5 + ((id * k) % 35) });
          annotations.push({ image_id: id, project_id: project.id, class_id: classIds[(id + k) % classIds.length], annotation_type: 'bbox', geometry, confidence: null, source: 'import', created_at: now, updated_at: now });
        }
      }
      for (let k = 0; k < annotations.length; k += 1_000) await trx.insertInto('annotations').values(annotations.slice(k, k + 1_000)).execute();
    });
  }
  await db.updateTable('projects').set({ image_count: images, annotated_image_count: images, annotation_count: images * perImage, class_count: CLASSES.length }).where('id', '=', project.id).execute();
  await versa.deps.blobs.put('projects/bench/one.jpg', Buffer.from('x'));
  return project.id;
}

/** A full garbage collection, without needing node to be started with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
