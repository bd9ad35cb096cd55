/**
 * On a real S3 server behind TLS (`npm run test:s3`, issue 27): the store speaks https to an endpoint whose
 * certificate the operator's CA signed (NODE_EXTRA_CA_CERTS, as Node reads it), for the requests it signs itself and
 * for those the SDK sends (listing, batch deletes); and it refuses a certificate nobody vouches for rather than
 * sending credentials to it. radosgw serves plain http here, so a TLS terminator in front of it plays the endpoint.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { s3Env, s3Skip, s3TestBucket } from './s3-env.js';

/** Puts, reads, ranges, lists and deletes through the store named by the environment; prints what it saw. */
const PROGRAM = `
import { loadConfig } from './src/config.js';
import { S3BlobStore } from './src/storage/s3-blob-store.js';
const config = loadConfig(process.env).blobStore;
const store = new S3BlobStore(config);
await store.put('projects/1/images/a.jpg', Buffer.from('over tls'));
const listed = [];
for await (const blob of store.list('projects/1')) listed.push(blob.key);
const range = [];
for await (const chunk of store.stream('projects/1/images/a.jpg', { start: 5, end: 7 })) range.push(chunk);
const seen = { get: (await store.get('projects/1/images/a.jpg')).toString(), size: await store.size('projects/1/images/a.jpg'), range: Buffer.concat(range).toString(), listed };
await store.deletePrefix('projects/1');
seen.after = await store.size('projects/1/images/a.jpg');
console.log(JSON.stringify(seen));
`;

function run(env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROGRAM], { env: { PATH: process.env.PATH!, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('S3 store over TLS', { skip: s3Skip }, () => {
  let dir: string;
  let terminator: tls.Server;
  let endpoint: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-s3-tls-'));
    await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]);
    const upstream = new URL(process.env.S3_ENDPOINT!);
    terminator = tls.createServer({ key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')) }, (socket) => {
      const plain = net.connect(Number(upstream.port || 80), upstream.hostname);
      socket.pipe(plain).pipe(socket);
      socket.on('error', () => plain.destroy());
      plain.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    endpoint = `https://localhost:${(terminator.address() as net.AddressInfo).port}`;
  });

  after(async () => {
    terminator.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes, reads, lists and deletes through https with the operator CA', async () => {
    const plain = s3Env();
    const bucket = await s3TestBucket(plain);
    const { code, out, err } = await run({ ...plain, S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: '1', NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') });
    assert.equal(code, 0, err);
    assert.deepEqual(JSON.parse(out), { get: 'over tls', size: 8, range: 'tls', listed: ['projects/1/images/a.jpg'], after: null });
    assert.deepEqual(await bucket.objects(), []);
    await bucket.empty();
  });

  it('refuses a certificate no CA vouches for, and writes nothing', async () => {
    const plain = s3Env();
    const bucket = await s3TestBucket(plain);
    const { code, err } = await run({ ...plain, S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: '1' });
    assert.notEqual(code, 0);
    assert.match(err, /self[- ]signed certificate|unable to verify/i);
    assert.deepEqual(await bucket.objects(), []);
    await bucket.empty();
  });
});
