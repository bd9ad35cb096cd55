/**
 * A project of 1,000,000 images and 5,000,000 annotations, seeded straight into the database (issue 2):
 *   - GET /api/projects/{id}/images?limit=100: first page, pages reached with the `after` cursor at several depths,
 *     `offset=900000`, and a split-filtered page — target p95 < 20 ms with `after`, < 100 ms with the offset;
 *   - GET /api/stats — target < 20 ms.
 * The server runs as its own process. SQLite by default; with DATABASE_URL=postgres://…/db a fresh database is made
 * beside `db` for the run and dropped afterwards.
 * Usage: npx tsx bench/large-project.ts [images=1000000] [annotationsPerImage=5] [requests=200]
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { percentile, startServer, timeGets } from './lib/server.js';

const imageCount = Number(process.argv[2] ?? 1_000_000);
const perImage = Number(process.argv[3] ?? 5);
const requests = Number(process.argv[4] ?? 200);
const NOW = '2026-01-01T00:00:00.000Z';

interface Seeder {
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

let databaseUrl = '';
let dropDatabase = async () => {};
if (process.env.DATABASE_URL) {
  const base = new URL(process.env.DATABASE_URL);
  const name = `versa_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  databaseUrl = url.toString();
  dropDatabase = async () => {
    const client = new pg.Client({ connectionString: base.toString() });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  };
}

const server = await startServer(databaseUrl ? { DATABASE_URL: databaseUrl } : {});
try {
  const project = await server.api('POST', '/api/projects', { name: 'a million images' });
  const cls = await server.api('POST', `/api/projects/${project.id}/classes`, { name: 'thing' });
  const seeder: Seeder = databaseUrl ? await pgSeeder(databaseUrl) : sqliteSeeder(join(server.dataDir, 'versa.db'));
  const started = performance.now();
  const series = databaseUrl
    ? `select i from generate_series(1, ${imageCount}) as i`
    : `with recursive s(i) as (select 1 union all select i + 1 from s where i < ${imageCount}) select i from s`;
  const hex = databaseUrl ? `lpad(to_hex(i), 64, '0')` : `printf('%064x', i)`;
  await seeder.exec(
    `insert into images (project_id, filename, original_name, width, height, split, sha256, mime_type, size_bytes,
       blob_key, thumbnail_key, annotation_count, created_at)
     select ${project.id}, 'img' || i || '.jpg', 'img' || i || '.jpg', 1280, 960,
       case i % 10 when 0 then 'test' when 1 then 'valid' when 2 then 'valid' else 'train' end,
       ${hex}, 'image/jpeg', 1000, 'projects/${project.id}/images/missing.jpg', 'projects/${project.id}/thumbs/missing.webp',
       ${perImage}, '${NOW}' from (${series}) as s`,
  );
  const copies = Array.from({ length: perImage }, (_, k) => `select ${k + 1} as k`).join(' union all ');
  await seeder.exec(
    `insert into annotations (image_id, project_id, class_id, annotation_type, geometry, confidence, source, created_at, updated_at)
     select images.id, ${project.id}, ${cls.id}, 'bbox', '{"x":1,"y":1,"width":50,"height":40}', null, 'manual', '${NOW}', '${NOW}'
     from images cross join (${copies}) as c where images.project_id = ${project.id}`,
  );
  await seeder.exec(
    `update projects set image_count = ${imageCount}, annotated_image_count = ${perImage > 0 ? imageCount : 0},
       annotation_count = ${imageCount * perImage} where id = ${project.id}`,
  );
  await seeder.exec(databaseUrl ? 'vacuum analyze' : 'analyze');
  await seeder.close();
  console.log(`seeded ${imageCount} images and ${imageCount * perImage} annotations in ${((performance.now() - started) / 1000).toFixed(1)} s (${databaseUrl ? 'PostgreSQL' : 'SQLite'})\n`);

  const first = await server.api('GET', `/api/projects/${project.id}/images?limit=1`);
  const firstId: number = first[0].id;
  const base = `${server.url}/api/projects/${project.id}/images?limit=100`;
  const cases: [string, string][] = [
    ['first page', base],
    ['after, depth 10,000', `${base}&after=${firstId + 10_000 - 1}`],
    ['after, depth 500,000', `${base}&after=${firstId + Math.min(500_000, imageCount - 200) - 1}`],
    ['after, depth 990,000', `${base}&after=${firstId + Math.min(990_000, imageCount - 200) - 1}`],
    ['offset=900,000', `${base}&offset=${Math.min(900_000, imageCount - 200)}`],
    ['split=valid, after depth 500,000', `${base}&split=valid&after=${firstId + Math.min(500_000, imageCount - 200) - 1}`],
    ['GET /api/stats', `${server.url}/api/stats`],
  ];
  console.log('| request | p50 ms | p95 ms | max ms |');
  console.log('|---|---|---|---|');
  for (const [name, url] of cases) {
    await timeGets(url, server.token, 10); // warm-up
    const times = await timeGets(url, server.token, requests);
    console.log(`| ${name} | ${percentile(times, 50).toFixed(2)} | ${percentile(times, 95).toFixed(2)} | ${Math.max(...times).toFixed(2)} |`);
  }
  console.log(`\n${requests} sequential requests each over keep-alive; targets: after-cursor p95 < 20 ms, offset p95 < 100 ms, stats < 20 ms`);
} finally {
  await server.stop();
  await dropDatabase();
}

function sqliteSeeder(file: string): Seeder {
  const db = new SQLite(file);
  db.pragma('busy_timeout = 60000');
  return { exec: async (sql) => void db.exec(sql), close: async () => void db.close() };
}

async function pgSeeder(url: string): Promise<Seeder> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return { exec: async (sql) => void (await client.query(sql)), close: () => client.end() };
}
