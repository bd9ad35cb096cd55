/**
 * Quality at scale, on rows seeded straight into the database (N images, 10·N box annotations; default 100k / 1M),
 * each image with cached features and a dHash (1 in 50 a near copy of its neighbour, so groups exist), measured
 * through the HTTP API of the compiled server running as its own process (`npm start`'s build and flags):
 *   1. the full quality report (every check of the catalog) — target < 5 s;
 *   2. the dataset profile — target < 1 s: from nothing (the project's first), after an edit (an annotation drawn, an
 *      image moved to another split, a class renamed: the parts they touched are computed again), unchanged (kept),
 *      and after the server restarted and one more edit (the other parts read from the database);
 *   3. the canonical export streamed to the end — target ≥ 50,000 records/s, the server's peak RSS < 300 MB.
 * Medians of `rounds`. SQLite by default; DATABASE_URL=postgres://… runs it on PostgreSQL in a fresh database.
 * Usage: npx tsx bench/quality.ts [images=100000] [rounds=3]
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import type { Db } from '../src/db/database.js';
import { median, rssMb, startServer, withServerNodeFlags } from './lib/server.js';

await withServerNodeFlags();

const imageCount = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
const CLASSES = ['car', 'bus', 'truck', 'person', 'bicycle'];

/** On PostgreSQL: a database of its own, dropped at the end. */
const baseUrl = process.env.DATABASE_URL ?? '';
const database = baseUrl ? `bench_quality_${randomBytes(4).toString('hex')}` : '';
const url = baseUrl ? baseUrl.replace(/\/[^/]*$/, `/${database}`) : '';
const admin = async (statement: string) => {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  await client.query(statement);
  await client.end();
};
if (url) await admin(`create database ${database}`);

let server = await startServer(url ? { DATABASE_URL: url } : {}, undefined, { compiled: true });
const handle = await openDatabase({ dataDir: server.dataDir, databaseUrl: url || null });
try {
  const user = await handle.db.selectFrom('users').select('id').where('email', '=', 'bench@versa.local').executeTakeFirstOrThrow();
  const seedStart = performance.now();
  const projectId = await seedProject(handle.db, user.id, imageCount, 10);
  // What autovacuum's analyze does within a minute of a bulk load: without it PostgreSQL plans with the empty tables'
  // statistics (thousands of annotations per image) and JIT-compiles every canonical page (150 ms each).
  if (url) await sql`analyze`.execute(handle.db);
  await handle.close();
  console.log(`seeded ${imageCount} images, ${imageCount * 10} annotations in ${((performance.now() - seedStart) / 1000).toFixed(1)} s (${url ? 'PostgreSQL' : 'SQLite'})`);
  console.log(`server idle RSS ${(await rssMb(server.pid, 'VmRSS')).toFixed(0)} MB\n`);

  const timed = async <T>(run: () => Promise<T>): Promise<[number, T]> => {
    const t0 = performance.now();
    const value = await run();
    return [(performance.now() - t0) / 1000, value];
  };
  const report: number[] = [];
  const profile: number[] = [];
  const exportRuns: { seconds: number; records: number; peakRss: number }[] = [];
  let last: any = null;
  // The export first, on the server as it started: its RSS is the export's own, not what a report left behind.
  for (let round = 0; round < rounds; round++) {
    let peakRss = await rssMb(server.pid, 'VmRSS');
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, await rssMb(server.pid, 'VmRSS'));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const [seconds, records] = await timed(async () => {
      const res = await fetch(`${server.url}/api/projects/${projectId}/canonical`, { headers: { authorization: `Bearer ${server.token}` } });
      if (!res.ok) throw new Error(`canonical → ${res.status}`);
      let lines = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      }
      return lines;
    });
    sampling = false;
    await sampler;
    exportRuns.push({ seconds, records, peakRss });
  }
  const keptProfile: number[] = [];
  // The first profile of the project, from nothing (the server has kept no part of it yet).
  const [coldProfile] = await timed(() => server.api('GET', `/api/projects/${projectId}/profile`));
  const classes = (await server.api('GET', `/api/projects/${projectId}/classes`)) as { id: number; name: string }[];
  const firstImage = (await server.api('GET', `/api/projects/${projectId}/images?limit=1`)) as { id: number }[];
  for (let round = 0; round < rounds; round++) {
    const [reportSeconds, body] = await timed(() => server.api('POST', `/api/projects/${projectId}/quality`, {}));
    report.push(reportSeconds);
    last = body;
    // An edit first, so that the profile is computed again, not kept from the last round: an annotation drawn on one
    // image, another image moved to another split, and a class renamed.
    const image = firstImage[0].id + ((round * 7_919) % imageCount);
    await server.api('POST', `/api/images/${image}/annotations`, { class_id: classes[1].id, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 50, height: 40 } });
    await server.api('PATCH', `/api/images/${firstImage[0].id + ((round * 3_571 + 500) % imageCount)}`, { split: round % 2 ? 'valid' : 'test' });
    await server.api('PATCH', `/api/classes/${classes[0].id}`, { name: `${CLASSES[0]}-${round}` });
    profile.push((await timed(() => server.api('GET', `/api/projects/${projectId}/profile`)))[0]);
    keptProfile.push((await timed(() => server.api('GET', `/api/projects/${projectId}/profile`)))[0]);
  }
  // A restarted server: the parts come from the database, those of one more edit computed.
  await server.stop();
  server = await startServer(url ? { DATABASE_URL: url } : {}, server.dataDir, { compiled: true });
  await server.api('POST', `/api/images/${firstImage[0].id}/annotations`, { class_id: classes[1].id, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 50, height: 40 } });
  const [restartedProfile] = await timed(() => server.api('GET', `/api/projects/${projectId}/profile`));
  console.log('| round | report s | profile after an edit s | profile unchanged s | canonical s | records/s | server RSS during canonical, peak MB |');
  console.log('|---|---|---|---|---|---|---|');
  for (let i = 0; i < rounds; i++) {
    const e = exportRuns[i];
    console.log(`| ${i + 1} | ${report[i].toFixed(2)} | ${profile[i].toFixed(3)} | ${keptProfile[i].toFixed(3)} | ${e.seconds.toFixed(2)} | ${Math.round(e.records / e.seconds)} | ${e.peakRss.toFixed(0)} |`);
  }
  const rate = median(exportRuns.map((e) => e.records / e.seconds));
  console.log(
    `\nmedians: report ${median(report).toFixed(2)} s (target < 5), profile ${median(profile).toFixed(3)} s after an edit, ${median(keptProfile).toFixed(3)} s unchanged, ${coldProfile.toFixed(2)} s from nothing, ${restartedProfile.toFixed(3)} s after a restart and an edit (target < 1), ` +
      `canonical ${Math.round(rate)} records/s (target ≥ 50,000), server peak RSS ${Math.max(...exportRuns.map((e) => e.peakRss)).toFixed(0)} MB (target < 300)`,
  );
  console.log(`checks: ${last.checks.map((c: { id: string; count: number }) => `${c.id}=${c.count}`).join(', ')}`);
} finally {
  await server.stop();
  if (url) await admin(`drop database if exists ${database}`);
  await rm(server.dataDir, { recursive: true, force: true });
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
