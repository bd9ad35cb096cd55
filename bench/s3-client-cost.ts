/**
 * What the S3 client costs per request (issue 27): 400 PUTs of 276 KB, 8 in flight, through the store
 * (`S3BlobStore.put`: @aws-sdk/client-s3 with Content-MD5) against the same PUTs signed with @smithy/signature-v4 and
 * sent with Node's HTTP agent directly (SHA-256 payload signature, no MD5), taking turns; wall and this process's CPU
 * seconds. Against the S3 server `scripts/s3-test-server.sh` starts (path-style, http).
 * Usage: scripts/s3-test-server.sh run npx tsx bench/s3-client-cost.ts [rounds=3]
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import { S3BlobStore } from '../src/storage/s3-blob-store.js';
import { forEachConcurrently } from '../src/lib/batches.js';
const endpoint = process.env.S3_ENDPOINT!;
const creds = { accessKeyId: process.env.AWS_ACCESS_KEY_ID!, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY! };
const s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: creds });
await s3.send(new CreateBucketCommand({ Bucket: 'prof' }));
const store = new S3BlobStore({ kind: 's3', bucket: 'prof', prefix: 'p', endpoint, region: 'us-east-1', forcePathStyle: true, checksums: 'WHEN_REQUIRED', credentials: creds });
const n = 400; const body = Buffer.alloc(276000, 7);
const url = new URL(endpoint);
const toBytes = (d: string | ArrayBuffer | ArrayBufferView): string | Uint8Array =>
  typeof d === 'string' ? d : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : new Uint8Array(d);

/** Node's SHA-256 (and HMAC) in the shape the signer expects. */
class NodeSha {
  private readonly h;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.h = secret ? createHmac('sha256', toBytes(secret)) : createHash('sha256');
  }
  update(data: string | ArrayBuffer | ArrayBufferView) {
    this.h.update(toBytes(data));
  }
  async digest() {
    return new Uint8Array(this.h.digest());
  }
}
const signer = new SignatureV4({ credentials: creds, region: 'us-east-1', service: 's3', sha256: NodeSha, uriEscapePath: false });
const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
async function rawPut(key: string, data: Buffer) {
  const req = await signer.sign({ method: 'PUT', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: `/prof/p/${key}`, headers: { host: url.host, 'content-length': String(data.length), 'x-amz-content-sha256': createHash('sha256').update(data).digest('hex') }, body: data });
  await new Promise<void>((resolve, reject) => {
    const r = http.request({ agent, method: 'PUT', host: url.hostname, port: url.port, path: req.path, headers: req.headers }, (res) => { res.resume(); res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(String(res.statusCode))))); });
    r.on('error', reject); r.end(data);
  });
}
const t = async (label: string, f: () => Promise<unknown>) => { const u0 = process.cpuUsage(); const s = performance.now(); await f(); const u = process.cpuUsage(u0); console.log(label, 'wall', ((performance.now() - s) / 1000).toFixed(2), 'cpu', ((u.user + u.system) / 1e6).toFixed(2)); };
const rounds = Number(process.argv[2] ?? 3);
for (let r = 0; r < rounds; r++) {
  await t('sdk put x400', () => forEachConcurrently([...Array(n).keys()], 8, (i) => store.put(`a/${i}`, body)));
  await t('raw put x400', () => forEachConcurrently([...Array(n).keys()], 8, (i) => rawPut(`b/${i}`, body)));
}
console.log('raw object equal:', Buffer.compare(await store.get('b/5'), body) === 0);
