/**
 * The multipart parser alone (issue 12): src/http/multipart.ts `multipartFiles` against busboy on the same bodies,
 * each producing what the upload route needs (every file of the field whole in memory, with its SHA-256), and a
 * bare baseline that only hashes and copies the same bytes (no parsing). No HTTP, no disk: bodies are generated in
 * memory and fed in 64 KiB chunks, as a socket delivers them. The three take turns in every round; medians of the
 * rounds are reported, with each parser's time as a ratio to the baseline.
 *
 *   npx tsx bench/multipart-parser.ts [rounds=7]
 */
import { createHash, randomBytes } from 'node:crypto';
import busboy from 'busboy';
import { multipartFiles } from '../src/http/multipart.js';

const rounds = Number(process.argv[2] ?? 7);
const CHUNK = 64 * 1024;
const BOUNDARY = '----versabench' + randomBytes(8).toString('hex');
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

interface Body {
  name: string;
  files: number;
  fileSize: number;
  chunks: Buffer[];
  bytes: number;
}

function makeBody(name: string, files: number, fileSize: number): Body {
  const parts: Buffer[] = [Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nbench\r\n`)];
  for (let i = 0; i < files; i++) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="img-${i}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`));
    parts.push(randomBytes(fileSize));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  const whole = Buffer.concat(parts);
  const chunks: Buffer[] = [];
  for (let i = 0; i < whole.length; i += CHUNK) chunks.push(whole.subarray(i, i + CHUNK));
  return { name, files, fileSize, chunks, bytes: whole.length };
}

async function* feed(chunks: Buffer[]): AsyncGenerator<Buffer> {
  for (const c of chunks) yield c;
}

const limits = { files: 100_000, fields: 100, parts: 100_001, fileSize: 256 * 1024 * 1024 };

async function ours(body: Body): Promise<number> {
  let n = 0;
  for await (const file of multipartFiles(feed(body.chunks), CONTENT_TYPE, { field: 'files', limits })) {
    if (file.bytes.length !== body.fileSize || file.sha256.length !== 64) throw new Error('ours: wrong file');
    n++;
  }
  return n;
}

function theirs(body: Body): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    const bb = busboy({ headers: { 'content-type': CONTENT_TYPE }, limits: { files: limits.files, fields: limits.fields, parts: limits.parts, fileSize: limits.fileSize } });
    bb.on('file', (name, stream) => {
      if (name !== 'files') return stream.resume();
      const hash = createHash('sha256');
      const pieces: Buffer[] = [];
      stream.on('data', (d: Buffer) => {
        hash.update(d);
        pieces.push(d);
      });
      stream.on('end', () => {
        const bytes = Buffer.concat(pieces);
        const sha256 = hash.digest('hex');
        if (bytes.length !== body.fileSize || sha256.length !== 64) reject(new Error('busboy: wrong file'));
        n++;
      });
    });
    bb.on('error', reject);
    bb.on('close', () => resolve(n));
    (async () => {
      for (const c of body.chunks) if (!bb.write(c)) await new Promise((r) => bb.once('drain', r));
      bb.end();
    })().catch(reject);
  });
}

/** No parsing: hash and copy the file-sized slices of the same chunks (what any parser must do at least). */
async function bare(body: Body): Promise<number> {
  let n = 0;
  let hash = createHash('sha256');
  let pieces: Buffer[] = [];
  let have = 0;
  for await (const chunk of feed(body.chunks)) {
    let at = 0;
    while (at < chunk.length) {
      const take = Math.min(body.fileSize - have, chunk.length - at);
      const view = chunk.subarray(at, at + take);
      hash.update(view);
      pieces.push(view);
      have += take;
      at += take;
      if (have === body.fileSize) {
        Buffer.concat(pieces);
        hash.digest('hex');
        n++;
        hash = createHash('sha256');
        pieces = [];
        have = 0;
      }
    }
  }
  return n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn: () => Promise<number>, expected: number, label: string): Promise<number> {
  const start = process.hrtime.bigint();
  const n = await fn();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (label !== 'bare' && n !== expected) throw new Error(`${label}: ${n} files, expected ${expected}`);
  return ms;
}

const bodies = [makeBody('4 files × 16 MiB', 4, 16 * 1024 * 1024), makeBody('2,000 files × 8 KiB', 2000, 8 * 1024), makeBody('200 files × 200 KiB', 200, 200 * 1024)];
console.log(`node ${process.version}, ${rounds} rounds (after one warm-up), 64 KiB chunks; medians in ms`);
console.log('| body | MiB | bare (hash + copy) | ours | busboy | ours / bare | busboy / bare | busboy / ours |');
console.log('|---|---|---|---|---|---|---|---|');
for (const body of bodies) {
  const runs = { bare: [] as number[], ours: [] as number[], busboy: [] as number[] };
  for (let r = -1; r < rounds; r++) {
    // Take turns, starting with a different side each round.
    const order = [['bare', bare], ['ours', ours], ['busboy', theirs]] as const;
    for (let k = 0; k < 3; k++) {
      const [label, fn] = order[(k + Math.max(r, 0)) % 3];
      const ms = await time(() => fn(body), body.files, label);
      if (r >= 0) runs[label].push(ms);
    }
  }
  const [b, o, t] = [median(runs.bare), median(runs.ours), median(runs.busboy)];
  console.log(`| ${body.name} | ${(body.bytes / 1048576).toFixed(1)} | ${b.toFixed(1)} | ${o.toFixed(1)} | ${t.toFixed(1)} | ${(o / b).toFixed(2)} | ${(t / b).toFixed(2)} | ${(t / o).toFixed(2)} |`);
}
