/**
 * A hostile COCO import: one 32×32 image and a COCO JSON with N boxes (issue 11, High 1: N = 1M was a 2.8 MB zip that
 * stalled every other request for 16 s and kept 1.6 GB). The server runs as its own process; while the import runs,
 * this script sends sequential `GET /api/projects` (one in flight, 10 ms apart) and reports their latencies against
 * the same requests with no import running (the bare baseline of the same run), the server's peak RSS (VmHWM) and
 * the import's status and duration. Target: other requests p99 < 100 ms.
 * Usage: npx tsx bench/import-stress.ts [annotations=1000000] [rounds=3]
 * Extra server environment (e.g. MAX_IMPORT_ANNOTATIONS=2000000) passes through from this process's environment.
 */
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import yazl from 'yazl';
import { median, percentile, startServer, type BenchServer } from './lib/server.js';

const annotations = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 3);

async function buildZip(n: number): Promise<Buffer> {
  const image = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 90, g: 120, b: 200 } } }).png().toBuffer();
  // Built in pieces: past ~5M boxes the document is longer than a JavaScript string may be.
  const pieces: Buffer[] = [Buffer.from('{"images":[{"id":1,"file_name":"a.png","width":32,"height":32}],"categories":[{"id":1,"name":"box"}],"annotations":[')];
  let parts: string[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(`${i ? ',' : ''}{"id":${i + 1},"image_id":1,"category_id":1,"bbox":[${i % 20},${i % 17},5,6],"area":30,"iscrowd":0,"segmentation":[]}`);
    if (parts.length === 100_000) {
      pieces.push(Buffer.from(parts.join('')));
      parts = [];
    }
  }
  pieces.push(Buffer.from(`${parts.join('')}]}`));
  const zip = new yazl.ZipFile();
  zip.addBuffer(image, 'images/a.png');
  zip.addBuffer(Buffer.concat(pieces), 'annotations.json');
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}

/** CPU seconds (user + system) the process has used, from /proc (clock ticks of 10 ms). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Sequential GETs until `until` settles; latencies in ms. */
async function probe(server: BenchServer, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => { done = true; });
  const times: number[] = [];
  while (!done) {
    const start = performance.now();
    const res = await fetch(`${server.url}/api/projects`, { headers: { authorization: `Bearer ${server.token}` } });
    await res.arrayBuffer();
    times.push(performance.now() - start);
    await new Promise((r) => setTimeout(r, 10));
  }
  return times;
}

const zip = await buildZip(annotations);
console.log(`zip: ${(zip.length / 1024 ** 2).toFixed(1)} MB, ${annotations.toLocaleString()} boxes on one 32×32 image`);
const rows: string[] = [];
for (let round = 0; round < rounds; round++) {
  const server = await startServer({ LOG_LEVEL: 'error' });
  try {
    const baseline = await probe(server, new Promise((r) => setTimeout(r, 2000)));
    const form = new FormData();
    form.append('name', `stress ${round}`);
    form.append('file', new Blob([zip as Uint8Array<ArrayBuffer>]), 'stress.zip');
    const started = performance.now();
    const cpuBefore = await cpuSeconds(server.pid);
    let status = 0;
    let body = '';
    const upload = fetch(`${server.url}/api/projects/import`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: form })
      .then(async (res) => { status = res.status; body = await res.text(); })
      .catch((error: Error) => { status = -1; body = error.message; });
    const during = await probe(server, upload);
    const seconds = (performance.now() - started) / 1000;
    const cpu = (await cpuSeconds(server.pid)) - cpuBefore;
    const rss = await peakRssMb(server.pid);
    const outcome = status === 201 ? `201 (${JSON.parse(body).annotation_count} annotations)` : `${status} ${body.slice(0, 120)}`;
    rows.push(`| ${round + 1} | ${outcome} | ${seconds.toFixed(1)} s | ${cpu.toFixed(1)} s | ${rss} MB | ${percentile(baseline, 99).toFixed(1)} ms | ${median(during).toFixed(1)} / ${percentile(during, 99).toFixed(1)} / ${Math.max(...during).toFixed(0)} ms (${during.length}) |`);
    console.log(rows.at(-1));
  } finally {
    await server.stop().catch(() => undefined);
  }
}
console.log('\n| round | import | duration | server CPU | server peak RSS | GET p99 idle | GET p50 / p99 / max during import (requests) |\n|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
