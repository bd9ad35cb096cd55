import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  type _Object,
} from '@aws-sdk/client-s3';
import type { S3BlobStoreConfig } from '../config.js';
import { assertBlobKey, missingBlob, type BlobStore, type StoredBlob } from './blob-store.js';
import { S3Http } from './s3-http.js';

const MiB = 1024 * 1024;

export interface S3Tuning {
  /** Bytes per part of a streamed upload (S3's least is 5 MiB); a stream no longer than one part is one PutObject. */
  partSize?: number;
  /** Parts of one upload in flight at once (each held in memory). */
  partsInFlight?: number;
  /** Keys per ListObjectsV2 page (S3's most is 1,000). */
  pageSize?: number;
}

/**
 * Blobs as objects of an S3 bucket under a key prefix. Every write is atomic (S3 shows an object only once whole).
 * One object's requests (PUT, GET, HEAD, DELETE) and multipart parts are signed and sent by S3Http, a third of the
 * SDK's CPU per request (issue 27), each PUT with its body's SHA-256, so the server refuses bytes damaged on the way.
 * Listing, batch deletes and beginning, completing and aborting multipart uploads go through @aws-sdk/client-s3. A
 * stream longer than one part goes up as a multipart upload (parts of `partSize`: 8 MiB × S3's 10,000 parts is
 * 78 GiB), aborted on any failure so that an interrupted upload leaves nothing behind.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly http: S3Http;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: number;
  private readonly partsInFlight: number;
  private readonly pageSize: number;

  constructor(config: S3BlobStoreConfig, tuning: S3Tuning = {}) {
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint ?? undefined,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials ?? undefined,
      requestChecksumCalculation: config.checksums,
      responseChecksumValidation: config.checksums,
    });
    this.http = new S3Http(config);
    this.bucket = config.bucket;
    this.prefix = config.prefix ? `${config.prefix}/` : '';
    this.partSize = tuning.partSize ?? 8 * MiB;
    this.partsInFlight = tuning.partsInFlight ?? 4;
    this.pageSize = tuning.pageSize ?? 1000;
    if (this.partSize < 5 * MiB) throw new Error('S3 parts are at least 5 MiB');
  }

  private objectKey(key: string): string {
    assertBlobKey(key);
    return this.prefix + key;
  }

  async put(key: string, data: Buffer | Uint8Array): Promise<void> {
    await this.http.headers({ method: 'PUT', key: this.objectKey(key), body: data });
  }

  async putStream(key: string, data: Readable): Promise<number> {
    const Key = this.objectKey(key);
    const parts = partsOf(data, this.partSize);
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    if (second.done) {
      const body = first.done ? [] : first.value;
      await this.http.headers({ method: 'PUT', key: Key, body });
      return byteLength(body);
    }
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key }));
    const etags: string[] = [];
    const pending: Promise<unknown>[] = [];
    let bytes = 0;
    const upload = (body: Buffer[]) => {
      const PartNumber = pending.length + 1;
      bytes += byteLength(body);
      const sent = this.http
        .headers({ method: 'PUT', key: Key, query: { partNumber: String(PartNumber), uploadId: UploadId! }, body })
        .then((headers) => (etags[PartNumber - 1] = headers.etag!));
      sent.catch(() => undefined); // awaited below, in order; this keeps a later part's failure from going unhandled meanwhile
      pending.push(sent);
      // Read on while fewer than partsInFlight parts are on their way; else wait for the oldest of them.
      return pending.length >= this.partsInFlight ? pending[pending.length - this.partsInFlight] : undefined;
    };
    try {
      await upload(first.value as Buffer[]);
      await upload(second.value);
      for await (const body of parts) await upload(body);
      await Promise.all(pending);
      await this.client.send(new CompleteMultipartUploadCommand({
        Bucket: this.bucket, Key, UploadId, MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }));
    } catch (err) {
      data.destroy();
      await Promise.allSettled(pending);
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId })).catch(() => undefined);
      throw err;
    }
    return bytes;
  }

  async get(key: string): Promise<Buffer> {
    return this.http.bytes({ method: 'GET', key: this.objectKey(key) }).catch((err) => Promise.reject(missingOr(err, key)));
  }

  stream(key: string, range?: { start: number; end: number }): Readable {
    const headers = range ? { range: `bytes=${range.start}-${range.end}` } : undefined;
    return this.http.stream({ method: 'GET', key: this.objectKey(key), headers }, (err) => missingOr(err, key) as Error);
  }

  async size(key: string): Promise<number | null> {
    try {
      return Number((await this.http.headers({ method: 'HEAD', key: this.objectKey(key) }))['content-length'] ?? 0);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.http.headers({ method: 'DELETE', key: this.objectKey(key) });
  }

  async deletePrefix(prefix: string): Promise<void> {
    for await (const page of this.pages(prefix)) {
      const res = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: page.map(({ Key }) => ({ Key })), Quiet: true } }));
      if (res.Errors?.length) throw new Error(`${res.Errors.length} objects under "${prefix}" could not be deleted: ${res.Errors[0].Code} ${res.Errors[0].Message}`);
    }
  }

  async *list(prefix: string): AsyncIterable<StoredBlob> {
    for await (const page of this.pages(prefix)) {
      for (const object of page) yield { key: object.Key!.slice(this.prefix.length), size: object.Size ?? 0, modifiedMs: object.LastModified?.getTime() ?? 0 };
    }
  }

  async removeUnfinishedWrites(beforeMs: number): Promise<number> {
    let removed = 0;
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    do {
      const res = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: this.prefix, KeyMarker, UploadIdMarker, MaxUploads: this.pageSize }));
      for (const upload of res.Uploads ?? []) {
        if ((upload.Initiated?.getTime() ?? 0) >= beforeMs) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }));
        removed++;
      }
      [KeyMarker, UploadIdMarker] = res.IsTruncated ? [res.NextKeyMarker, res.NextUploadIdMarker] : [undefined, undefined];
    } while (KeyMarker);
    return removed;
  }

  /** The objects under `prefix/`, a page at a time (non-empty pages only). */
  private async *pages(prefix: string): AsyncGenerator<_Object[]> {
    const Prefix = `${this.objectKey(prefix)}/`;
    let ContinuationToken: string | undefined;
    do {
      const res = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix, ContinuationToken, MaxKeys: this.pageSize }));
      if (res.Contents?.length) yield res.Contents;
      ContinuationToken = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }
}

/** A 404 about the key (a missing bucket is a configuration error, not a missing blob). */
const isMissing = (err: unknown): boolean =>
  (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404 && (err as Error).name !== 'NoSuchBucket';

const missingOr = (err: unknown, key: string): unknown => (isMissing(err) ? missingBlob(key) : err);

const byteLength = (chunks: readonly Uint8Array[]): number => chunks.reduce((n, c) => n + c.length, 0);

/** The stream cut into parts of exactly `size` bytes, the last one shorter (none at all for an empty stream), each part
 *  the list of chunks it arrived in: sent as they are, never copied into one buffer. */
async function* partsOf(source: Readable, size: number): AsyncGenerator<Buffer[]> {
  let chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of source) {
    let rest: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    while (length + rest.length >= size) {
      chunks.push(rest.subarray(0, size - length));
      rest = rest.subarray(size - length);
      yield chunks;
      chunks = [];
      length = 0;
    }
    if (rest.length > 0) {
      chunks.push(rest);
      length += rest.length;
    }
  }
  if (length > 0) yield chunks;
}
