/**
 * What the S3 client costs per request (issue 27): 400 PUTs of 276 KB, then 400 GETs of them, 8 in flight, through
 * @aws-sdk/client-s3 (PutObject with Content-MD5, as the store sent them before) against the store (`S3BlobStore`:
 * requests signed with @smithy/signature-v4 and sent with Node's HTTP, src/storage/s3-http.ts), taking turns; wall
 * and this process's CPU seconds. Against the S3 server `scripts/s3-test-server.sh` starts (path-style, http).
 * Usage: scripts/s3-test-server.sh run npx tsx bench/s3-client-cost.ts [rounds=3]
 */
import { createHash } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { forEachConcurrently } from '../src/lib/batches.js';
import { S3BlobStore } from '../src/storage/s3-blob-store.js';

const endpoint = process.env.S3_ENDPOINT!;
const credentials = { accessKeyId: process.env.AWS_ACCESS_KEY_ID!, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY! };
const s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
await s3.send(new CreateBucketCommand({ Bucket: 'prof' })).catch((err) => {
  if (err.name !== 'BucketAlreadyOwnedByYou') throw err;
});
const store = new S3BlobStore({ kind: 's3', bucket: 'prof', prefix: 'p', endpoint, region: 'us-east-1', forcePathStyle: true, checksums: 'WHEN_REQUIRED', credentials });
const n = 400;
const body = Buffer.alloc(276000, 7);
const keys = [...Array(n).keys()];
const ContentMD5 = createHash('md5').update(body).digest('base64');

const sdk = {
  put: async (key: string) => void (await s3.send(new PutObjectCommand({ Bucket: 'prof', Key: `p/${key}`, Body: body, ContentLength: body.length, ContentMD5 }))),
  get: async (key: string) => (await s3.send(new GetObjectCommand({ Bucket: 'prof', Key: `p/${key}` }))).Body!.transformToByteArray(),
};
const timed = async (label: string, run: () => Promise<unknown>) => {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  console.log(`${label}: wall ${((performance.now() - start) / 1000).toFixed(2)} s, cpu ${((used.user + used.system) / 1e6).toFixed(2)} s`);
};
const rounds = Number(process.argv[2] ?? 3);
for (let r = 0; r < rounds; r++) {
  await timed(`sdk   put ×${n}`, () => forEachConcurrently(keys, 8, (i) => sdk.put(`a/${i}`)));
  await timed(`store put ×${n}`, () => forEachConcurrently(keys, 8, (i) => store.put(`b/${i}`, body)));
  await timed(`sdk   get ×${n}`, () => forEachConcurrently(keys, 8, async (i) => void (await sdk.get(`b/${i}`))));
  await timed(`store get ×${n}`, () => forEachConcurrently(keys, 8, async (i) => void (await store.get(`a/${i}`))));
}
console.log('each reads what the other wrote:', Buffer.compare(await store.get('a/5'), body) === 0 && Buffer.compare(Buffer.from(await sdk.get('b/5')), body) === 0);
