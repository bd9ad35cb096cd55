/**
 * Quality at scale, on rows seeded straight into the database (N images, 10·N box annotations; default 100k / 1M),
 * each image with cached features and a dHash (1 in 50 a near copy of its neighbour, so groups exist):
 *   1. the full quality report (every check of the catalog) — target < 5 s;
 *   2. the dataset profile — target < 1 s;
 *   3. the canonical export streamed to the end — target ≥ 50,000 records/s, peak RSS < 300 MB.
 * Medians of `rounds`. SQLite by default; DATABASE_URL=postgres://… runs it on PostgreSQL in a fresh schema.
 * Usage: npx tsx bench/quality.ts [images=100000] [rounds=3]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import type { Caller } from '../src/access/caller.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import type { Db } from '../src/db/database.js';
import { CanonicalRepository } from '../src/modules/quality/canonical.repository.js';
import { CanonicalService } from '../src/modules/quality/canonical.service.js';
import { ImageFeaturesRepository } from '../src/modules/quality/image-features.repository.js';
import { ImageFeatureRecorder } from '../src/modules/quality/image-features.service.js';
import { ProfileRepository } from '../src/modules/quality/profile.repository.js';
import { ProfileService } from '../src/modules/quality/profile.service.js';
import { QualityRepository } from '../src/modules/quality/quality.repository.js';
import { QualityService } from '../src/modules/quality/quality.service.js';
import { SampleDataRepository } from '../src/modules/quality/sample-data.repository.js';
import { median, withServerNodeFlags } from './lib/server.js';

await withServerNodeFlags();

const imageCount = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
const CLASSES = ['car', 'bus', 'truck', 'person', 'bicycle'];

const dataDir = await mkdtemp(join(tmpdir(), 'versa-bench-quality-'));
const url = process.env.DATABASE_URL ?? '';
const schema = url ? `bench_quality_${randomBytes(4).toString('hex')}` : undefined;
if (url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
}
const database = await openDatabase({ dataDir, databaseUrl: url || null, pgSchema: schema });
const versa = await buildApp(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: url, LOG_LEVEL: 'silent' }), { database, logger: false });
const { db, blobs, access } = versa.deps;
const features = new ImageFeaturesRepository(db);
const profiles = new ProfileService(new ProfileRepository(db));
const quality = new QualityService(access, new QualityRepository(db), features, new ImageFeatureRecorder(features, blobs), profiles, new SampleDataRepository(db));
const canonical = new CanonicalService(access, new CanonicalRepository(db));

try {
  const now = new Date().toISOString();
  const user = await db.insertInto('users').values({ email: 'bench@example.com', password_hash: 'x', display_name: 'bench', is_admin: 0, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const caller: Caller = { userId: user.id, email: 'bench@example.com', isAdmin: false, tokenId: 0, tokenKind: 'api', via: 'bearer', scope: 'read-write' };
  const seedStart = performance.now();
  const projectId = await seedProject(db, user.id, imageCount, 10);
  console.log(`seeded ${imageCount} images, ${imageCount * 10} annotations in ${((performance.now() - seedStart) / 1000).toFixed(1)} s (${url ? 'PostgreSQL' : 'SQLite'})\n`);
  collectGarbage();

  const report: number[] = [];
  const profile: number[] = [];
  const exportRuns: { seconds: number; records: number; peakRss: number }[] = [];
  let last: Awaited<ReturnType<QualityService['report']>> | null = null;
  for (let round = 0; round < rounds; round++) {
    let t0 = performance.now();
    last = await quality.report(caller, projectId);
    report.push((performance.now() - t0) / 1000);

    t0 = performance.now();
    await quality.profile(caller, projectId);
    profile.push((performance.now() - t0) / 1000);

    collectGarbage();
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    t0 = performance.now();
    const out = await canonical.stream(caller, projectId, { format: 'jsonl' });
    let records = 0;
    for await (const chunk of out.body) {
      const text = typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('latin1');
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) records++;
    }
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    exportRuns.push({ seconds, records, peakRss });
  }
  console.log('| round | report s | profile s | canonical s | records/s | canonical peak RSS MB |');
  console.log('|---|---|---|---|---|---|');
  for (let i = 0; i < rounds; i++) {
    const e = exportRuns[i];
    console.log(`| ${i + 1} | ${report[i].toFixed(2)} | ${profile[i].toFixed(3)} | ${e.seconds.toFixed(2)} | ${Math.round(e.records / e.seconds)} | ${(e.peakRss / 1e6).toFixed(0)} |`);
  }
  const rate = median(exportRuns.map((e) => e.records / e.seconds));
  console.log(
    `\nmedians: report ${median(report).toFixed(2)} s (target < 5), profile ${median(profile).toFixed(3)} s (target < 1), ` +
      `canonical ${Math.round(rate)} records/s (target ≥ 50,000), peak RSS ${(Math.max(...exportRuns.map((e) => e.peakRss)) / 1e6).toFixed(0)} MB (target < 300)`,
  );
  console.log(`checks: ${last!.checks.map((c) => `${c.id}=${c.count}`).join(', ')}`);
} finally {
  await versa.app.close();
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  }
  await rm(dataDir, { recursive: true, force: true });
}

async function seedProject(db: Db, ownerId: number, images: number, perImage: number): Promise<number> {
  const now = new Date().toISOString();
  const project = await db.insertInto('projects').values({ owner_id: ownerId, name: 'quality bench', description: '', location: '', project_type: 'object_detection', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
  const classIds: number[] = [];
  for (const className of CLASSES) {
    classIds.push((await db.insertInto('classes').values({ project_id: project.id, name: className, color: '#000000', created_at: now }).returning('id').executeTakeFirstOrThrow()).id);
  }
  // splitmix32: every bit well mixed (an LCG's low bits repeat with short periods and made most hashes collide).
  let state = 12345;
  const rand = () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let previousHash = '';
  const BATCH = 2_000;
  for (let first = 1; first <= images; first += BATCH) {
    await db.transaction().execute(async (trx) => {
      const rows = [];
      for (let i = first; i < Math.min(first + BATCH, images + 1); i++) {
        rows.push({
          project_id: project.id, filename: `img_${i}.jpg`, original_name: `img_${i}.jpg`, width: 640, height: 480,
          split: i % 10 === 0 ? 'valid' : i % 10 === 1 ? 'test' : 'train', sha256: `sha-${i}`, mime_type: 'image/jpeg', size_bytes: 1,
          blob_key: 'projects/bench/one.jpg', thumbnail_key: 'projects/bench/thumb.webp', annotation_count: perImage, created_at: now,
        });
      }
      const ids: { id: number }[] = [];
      for (let k = 0; k < rows.length; k += 500) ids.push(...(await trx.insertInto('images').values(rows.slice(k, k + 500)).returning('id').execute()));
      const annotations = [];
      const featureRows = [];
      const hashRows = [];
      for (const { id } of ids) {
        for (let k = 0; k < perImage; k++) {
          const geometry = JSON.stringify({ x: (id * 37 + k * 53) % 600, y: (id * 11 + k * 29) % 440, width: 5 + ((id + k) % 35), height: 5 + ((id * k) % 35) });
          annotations.push({ image_id: id, project_id: project.id, class_id: classIds[(id + k) % classIds.length], annotation_type: 'bbox', geometry, confidence: null, source: 'import', created_at: now, updated_at: now });
        }
        const hash = id % 50 === 0 && previousHash ? previousHash : rand().toString(16).padStart(8, '0') + rand().toString(16).padStart(8, '0');
        previousHash = hash;
        featureRows.push({ image_id: id, sha256: `sha-${id - 0}`, readable: 1, truncated: 0, blur: rand() % 500, brightness: 20 + (rand() % 220), entropy: (rand() % 800) / 100, grayscale: rand() % 20 === 0 ? 1 : 0, pixel_hash: `p${rand() % (images * 2)}` });
        hashRows.push({ image_id: id, sha256: `sha-${id}`, dhash: hash });
      }
      for (let k = 0; k < annotations.length; k += 1_000) await trx.insertInto('annotations').values(annotations.slice(k, k + 1_000)).execute();
      for (let k = 0; k < featureRows.length; k += 500) await trx.insertInto('image_features').values(featureRows.slice(k, k + 500)).execute();
      for (let k = 0; k < hashRows.length; k += 500) await trx.insertInto('image_phashes').values(hashRows.slice(k, k + 500)).execute();
    });
  }
  await db.updateTable('projects').set({ image_count: images, annotated_image_count: images, annotation_count: images * perImage, class_count: CLASSES.length }).where('id', '=', project.id).execute();
  return project.id;
}

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
