/**
 * `versa upload` (issue 31) against the upload route driven directly from Node, and the CLI's memory against file size.
 *  (a) Throughput: N generated 640×480 JPEGs in a folder; per round, into two fresh projects, (1) Node drives
 *      POST /api/projects/{id}/images itself — the same batches (16 files) and requests in flight (4) as the CLI's
 *      defaults, each file a file-backed Blob — and (2) the built `versa upload PROJECT FOLDER` runs as its own process
 *      (its start-up counted). The two take turns, the first alternating. Ratio = direct time / CLI time (median of
 *      rounds); target ≥ 0.9×.
 *  (b) Memory: the CLI's peak RSS uploading one file of 1×, 4× and 16× `sizeMb` (a JPEG padded past its end, so the
 *      bytes are real file bytes the client must send); a streamed upload keeps the peak flat in the file size.
 * The server runs as its own process (bench/lib/server.ts, MAX_UPLOAD_MB raised for (b)).
 * Usage: npx tsx bench/cli-upload.ts [images=1000] [rounds=3] [sizeMb=32]
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { openAsBlob } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateShapesImage } from '../src/synthetic/index.js';
import { buildCli } from '../test/cli/cli-build.js';
import { median, startServer } from './lib/server.js';

const count = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 3);
const sizeMb = Number(process.argv[4] ?? 32);
const BATCH = 16;
const IN_FLIGHT = 4;

const root = await mkdtemp(join(tmpdir(), 'versa-cli-bench-'));
const server = await startServer({ MAX_UPLOAD_MB: String(Math.max(64, sizeMb * 16 + 16)) });
try {
  const cli = await buildCli(root);
  const folder = join(root, 'images');
  await mkdir(folder);
  console.log(`generating ${count} 640×480 JPEGs…`);
  let bytes = 0;
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const { data } = await generateShapesImage({ seed: `cli-upload/${i}`, width: 640, height: 480, masks: false });
    const file = join(folder, `img-${String(i).padStart(5, '0')}.jpg`);
    await writeFile(file, data);
    files.push(file);
    bytes += data.length;
  }
  console.log(`${(bytes / 1e6).toFixed(1)} MB in all\n`);

  /** Runs the built CLI; resolves with its wall time (ms), exit status and peak RSS (MB, from the process itself). */
  const runCli = (args: string[]) =>
    new Promise<{ ms: number; code: number; rssMb: number; stdout: string }>((resolve, reject) => {
      const started = performance.now();
      const hook = "data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss='+process.resourceUsage().maxRSS+'\\n'))";
      const child = spawn(process.execPath, ['--import', hook, cli.script, ...args], {
        env: { PATH: process.env.PATH, HOME: root, VERSA_URL: server.url, VERSA_TOKEN: server.token },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', reject);
      child.on('close', (code) => {
        const kb = Number(stderr.match(/maxrss=(\d+)/)?.[1] ?? NaN);
        if (code !== 0 && code !== 1) reject(new Error(`versa ${args.join(' ')} exited ${code}: ${stderr}`));
        resolve({ ms: performance.now() - started, code: code ?? -1, rssMb: kb / 1024, stdout });
      });
    });

  /** The upload route driven from Node: batches of BATCH file-backed Blobs, IN_FLIGHT requests at a time. */
  async function direct(projectId: number): Promise<number> {
    const started = performance.now();
    let next = 0;
    let created = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < files.length) {
        const slice = files.slice(next, next + BATCH);
        next += slice.length;
        const form = new FormData();
        for (const file of slice) form.append('files', await openAsBlob(file), file.slice(folder.length + 1));
        const res = await fetch(`${server.url}/api/projects/${projectId}/images`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: form });
        if (res.status !== 201) throw new Error(`upload → ${res.status} ${await res.text()}`);
        created += ((await res.json()) as { created: number }).created;
      }
    }));
    if (created !== files.length) throw new Error(`direct upload created ${created} of ${files.length}`);
    return performance.now() - started;
  }

  async function viaCli(projectId: number): Promise<number> {
    const r = await runCli(['upload', String(projectId), folder, '--json', '--quiet']);
    const created = JSON.parse(r.stdout).created;
    if (r.code !== 0 || created !== files.length) throw new Error(`CLI upload: exit ${r.code}, created ${created}`);
    return r.ms;
  }

  const ratios: number[] = [];
  const directMs: number[] = [];
  const cliMs: number[] = [];
  console.log('round  direct (img/s)  CLI (img/s)  direct/CLI');
  for (let round = 0; round < rounds; round++) {
    const a = await server.api('POST', '/api/projects', { name: `direct ${round}` });
    const b = await server.api('POST', '/api/projects', { name: `cli ${round}` });
    let d: number;
    let c: number;
    if (round % 2 === 0) {
      d = await direct(a.id);
      c = await viaCli(b.id);
    } else {
      c = await viaCli(b.id);
      d = await direct(a.id);
    }
    directMs.push(d);
    cliMs.push(c);
    ratios.push(d / c);
    console.log(`${String(round + 1).padStart(5)}  ${(count / (d / 1000)).toFixed(1).padStart(14)}  ${(count / (c / 1000)).toFixed(1).padStart(11)}  ${(d / c).toFixed(2).padStart(10)}`);
  }
  console.log(`median: direct ${(count / (median(directMs) / 1000)).toFixed(1)} img/s, CLI ${(count / (median(cliMs) / 1000)).toFixed(1)} img/s, ratio ${median(ratios).toFixed(2)}× (target ≥ 0.9×)\n`);

  // (b) one big file per upload: the client's peak memory against its size.
  const jpeg = (await generateShapesImage({ seed: 'cli-upload/big', width: 640, height: 480, masks: false })).data;
  console.log('file size (MB)  CLI peak RSS (MB)  exit');
  const peaks: number[] = [];
  for (const factor of [1, 4, 16]) {
    const dir = join(root, `big-${factor}`);
    await mkdir(dir);
    const file = await open(join(dir, 'big.jpg'), 'w');
    await file.write(jpeg);
    const chunk = Buffer.alloc(1024 * 1024, 0x5a);
    for (let mb = 0; mb < sizeMb * factor; mb++) await file.write(chunk);
    await file.close();
    const project = await server.api('POST', '/api/projects', { name: `big ${factor}` });
    const r = await runCli(['upload', String(project.id), dir, '--json', '--quiet']);
    peaks.push(r.rssMb);
    console.log(`${String(sizeMb * factor).padStart(14)}  ${r.rssMb.toFixed(1).padStart(17)}  ${r.code}`);
  }
  console.log(`peak RSS grows ${(peaks[2] - peaks[0]).toFixed(1)} MB while the file grows ${sizeMb * 15} MB (a streamed upload keeps it about flat)`);
} finally {
  await server.stop();
  await rm(root, { recursive: true, force: true });
}
