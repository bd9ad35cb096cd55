/**
 * The S3 test server these tests run against (S3_ENDPOINT and the rest, as scripts/s3-test-server.sh prints them):
 * each caller gets a key prefix of its own in one bucket, and what it leaves behind can be inspected and removed.
 */
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, DeleteObjectsCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { loadConfig, type S3BlobStoreConfig } from '../../src/config.js';

const BUCKET = 'versa-tests';

/** Why the S3 tests skip here, or false when a server is configured. */
export const s3Skip: string | false = process.env.S3_ENDPOINT ? false : 'S3_ENDPOINT is not set: `npm run test:s3` starts an S3 server and runs these';

/** The environment that points Versa at a fresh prefix of the test bucket. */
export function s3Env(prefix = `t-${randomBytes(6).toString('hex')}`): Record<string, string> {
  const names = ['S3_ENDPOINT', 'S3_REGION', 'S3_FORCE_PATH_STYLE', 'S3_CHECKSUMS', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
  return { ...Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n]!]] : []))), BLOB_STORE: `s3://${BUCKET}/${prefix}` };
}

export interface TestBucket {
  config: S3BlobStoreConfig;
  client: S3Client;
  /** Every key under the prefix (relative to the bucket). */
  objects(): Promise<string[]>;
  /** Multipart uploads begun and neither completed nor aborted under the prefix. */
  unfinishedUploads(): Promise<string[]>;
  etag(key: string): Promise<string>;
  /** Removes every object under the prefix. */
  empty(): Promise<void>;
}

export async function s3TestBucket(env = s3Env()): Promise<TestBucket> {
  const config = loadConfig(env).blobStore;
  if (config.kind !== 's3') throw new Error('not an S3 configuration');
  const client = new S3Client({
    region: config.region, endpoint: config.endpoint ?? undefined, forcePathStyle: config.forcePathStyle, credentials: config.credentials ?? undefined,
    requestChecksumCalculation: config.checksums, responseChecksumValidation: config.checksums,
  });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET })).catch((err) => {
    if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
  });
  const Prefix = `${config.prefix}/`;
  const objects = async () => {
    const found: string[] = [];
    let ContinuationToken: string | undefined;
    do {
      const res = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix, ContinuationToken }));
      found.push(...(res.Contents ?? []).map((o) => o.Key!));
      ContinuationToken = res.NextContinuationToken;
    } while (ContinuationToken);
    return found;
  };
  return {
    config,
    client,
    objects,
    unfinishedUploads: async () => ((await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix }))).Uploads ?? []).map((u) => u.Key!),
    etag: async (key) => (await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: Prefix + key }))).ETag ?? '',
    empty: async () => {
      const keys = await objects();
      for (let i = 0; i < keys.length; i += 1000) {
        await client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) } }));
      }
      client.destroy();
    },
  };
}
