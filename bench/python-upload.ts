/**
 * Python client uploads (issue 31). (a) N generated 1280×960 JPEGs uploaded by `versa.upload_folder` (clients/python,
 * the machine's python3, its own process) against the upload route driven directly: the same files in the same
 * batches, multipart bodies encoded before the clock and sent with node:http, one request in flight as the client
 * sends them. Each side uploads into a fresh project (no duplicates); within a round the two take turns, the first
 * side alternating; the Python time is measured inside its process (interpreter start left out). Ratio = direct
 * time / client time (target ≥ 0.9), median of the per-round ratios.
 * (b) Streaming: the client's peak RSS (VmHWM, whole process) while uploading one file of each size through
 * `upload_model` (a `.pt` file is stored as is, so any bytes do), beside the same process's RSS before the upload.
 * Flat in the file size means the body is streamed from disk, not read whole.
 * Usage: npx tsx bench/python-upload.ts [images=1000] [batch=32] [rounds=3] [sizesMB=16,128,512]
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateShapesImage } from '../src/synthetic/index.js';
import { median, startServer, withServerNodeFlags } from './lib/server.js';

await withServerNodeFlags();
const run = promisify(execFile);
const count = Number(process.argv[2] ?? 1000);
const batch = Number(process.argv[3] ?? 32);
const rounds = Number(process.argv[4] ?? 3);
const sizesMb = (process.argv[5] ?? '16,128,512').split(',').map(Number);
const CLIENT = new URL('../clients/python/', import.meta.url).pathname;

const work = await mkdtemp(join(tmpdir(), 'versa-bench-py-'));
const folder = join(work, 'images');
await mkdir(folder);
console.log(`generating ${count} 1280×960 JPEGs…`);
const names: string[] = [];
let bytes = 0;
for (let i = 0; i < count; i++) {
  const image = await generateShapesImage({ seed: `py-upload/${i}`, width: 1280, height: 960, masks: false });
  const name = `img-${String(i).padStart(5, '0')}.jpg`;
  await writeFile(join(folder, name), image.data);
  names.push(name);
  bytes += image.data.length;
}
console.log(`${(bytes / 1e6).toFixed(1)} MB in all, ${batch} files a request\n`);

const server = await startServer();
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(path: string, type: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url + path);
    const req = http.request(url, { method: 'POST', agent, headers: { authorization: `Bearer ${server.token}`, 'content-type': type, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The batches' multipart bodies, as the client sends them (sorted names, `batch` files each), encoded up front. */
async function encodeBodies(): Promise<{ type: string; body: Buffer }[]> {
  const sorted = [...names].sort();
  const bodies = [];
  for (let start = 0; start < sorted.length; start += batch) {
    const form = new FormData();
    for (const name of sorted.slice(start, start + batch)) form.append('files', new Blob([await readFile(join(folder, name))], { type: 'image/jpeg' }), name);
    const request = new Request('http://encode.invalid/', { method: 'POST', body: form });
    bodies.push({ type: request.headers.get('content-type')!, body: Buffer.from(await request.arrayBuffer()) });
  }
  return bodies;
}

async function direct(projectId: number): Promise<number> {
  const bodies = await encodeBodies();
  const started = performance.now();
  for (const { type, body } of bodies) {
    const status = await post(`/api/projects/${projectId}/images`, type, body);
    if (status !== 201) throw new Error(`direct upload → ${status}`);
  }
  return (performance.now() - started) / 1000;
}

const PY_UPLOAD = `
import json, sys, time
from versa_client import Versa

def peak_mb():
    # VmHWM starts afresh at exec; getrusage's ru_maxrss would still hold the forking node process's peak.
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
base, token, project, folder, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
versa = Versa(base, token=token)
started = time.perf_counter()
report = versa.upload_folder(project, folder, labels=False, batch_size=batch, batch_bytes=1 << 40)
print(json.dumps({"seconds": time.perf_counter() - started, "created": report.created,
                  "peak_rss_mb": peak_mb()}))
`;

async function python(projectId: number): Promise<{ seconds: number; created: number; peak_rss_mb: number }> {
  const { stdout } = await run('python3', ['-c', PY_UPLOAD, server.url, server.token, String(projectId), folder, String(batch)], {
    env: { ...process.env, PYTHONPATH: CLIENT },
    maxBuffer: 1 << 20,
  });
  const seen = JSON.parse(stdout);
  if (seen.created !== count) throw new Error(`python created ${seen.created} of ${count}`);
  return seen;
}

const ratios: number[] = [];
const rows: string[] = [];
let projectNumber = 0;
const project = async () => (await server.api('POST', '/api/projects', { name: `py-upload-${++projectNumber}`, project_type: 'object_detection' })).id as number;
for (let round = 0; round < rounds; round++) {
  let directSeconds = 0;
  let client = { seconds: 0, created: 0, peak_rss_mb: 0 };
  for (const side of round % 2 === 0 ? ['direct', 'python'] : ['python', 'direct']) {
    if (side === 'direct') directSeconds = await direct(await project());
    else client = await python(await project());
  }
  ratios.push(directSeconds / client.seconds);
  rows.push(`| ${round + 1} | ${directSeconds.toFixed(2)} | ${client.seconds.toFixed(2)} | ${(count / client.seconds).toFixed(0)} | ${(directSeconds / client.seconds).toFixed(3)} | ${client.peak_rss_mb.toFixed(0)} |`);
}
console.log('| round | direct s | python client s | client images/s | ratio (direct/client) | client peak RSS MB |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log(`\nmedian ratio: ${median(ratios).toFixed(3)} (target ≥ 0.9)\n`);

const PY_BIG = `
import json, sys
from versa_client import Versa

def peak_mb():
    # VmHWM starts afresh at exec; getrusage's ru_maxrss would still hold the forking node process's peak.
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
base, token, project, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
versa = Versa(base, token=token, timeout=600)
versa.models(project)
before = peak_mb()
model = versa.upload_model(project, path, name=path.rsplit("/", 1)[-1])
print(json.dumps({"before_mb": before, "peak_rss_mb": peak_mb(), "size": model.size_bytes}))
`;

console.log('| file MB | client RSS before MB | client peak RSS MB | peak − before MB |');
console.log('|---|---|---|---|');
const bigProject = await project();
for (const mb of sizesMb) {
  const path = join(work, `weights-${mb}mb.pt`);
  const handle = await open(path, 'w');
  const chunk = Buffer.alloc(1 << 20);
  for (let i = 0; i < mb; i++) {
    chunk.writeUInt32LE(i, 0); // distinct files, distinct hashes
    await handle.write(chunk);
  }
  await handle.close();
  const { stdout } = await run('python3', ['-c', PY_BIG, server.url, server.token, String(bigProject), path], { env: { ...process.env, PYTHONPATH: CLIENT } });
  const seen = JSON.parse(stdout);
  if (seen.size !== mb << 20) throw new Error(`stored ${seen.size} bytes of ${mb << 20}`);
  console.log(`| ${mb} | ${seen.before_mb.toFixed(1)} | ${seen.peak_rss_mb.toFixed(1)} | ${(seen.peak_rss_mb - seen.before_mb).toFixed(1)} |`);
  await rm(path);
}

agent.destroy();
await server.stop();
await rm(work, { recursive: true, force: true });
