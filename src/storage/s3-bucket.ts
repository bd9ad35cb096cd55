import type { Readable } from 'node:stream';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { S3BlobStoreConfig } from '../config.js';
import { missingBlob, type BlobStore } from './blob-store.js';
import { S3BlobStore } from './s3-blob-store.js';
import { S3Http, type S3ObjectRequest } from './s3-http.js';

/** Where a project storage is: an S3-compatible endpoint, a bucket and a key prefix, and the credentials to use. */
export interface BucketLocation {
  readonly endpoint: string;
  readonly region: string;
  readonly forcePathStyle: boolean;
  readonly bucket: string;
  /** Key prefix without slashes at either end; '' for the whole bucket. */
  readonly prefix: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** An object as a listing shows it. */
export interface BucketObject {
  readonly key: string;
  readonly size: number;
  /** As S3 sends it, quotes included. */
  readonly etag: string;
  readonly modifiedMs: number;
}

/**
 * A user's bucket (a project storage, issue 27), read by whole object keys, unlike the BlobStore, whose keys Versa
 * makes: listed under the prefix, read whole or by range, only while an object still has the ETag it was imported with
 * (If-Match: a replaced object reads as missing rather than as other bytes than were hashed). Writes go through
 * `target()`, an S3BlobStore under the same prefix, so exports reach the bucket as they reach Versa's own store.
 * Listing goes through @aws-sdk/client-s3 with WHEN_REQUIRED checksums (S3-compatible servers such as Ceph RGW and
 * MinIO accept it, and so does AWS); reading an object through S3Http, as the blob store does.
 */
export class S3Bucket {
  private readonly client: S3Client;
  private readonly http: S3Http;
  /** S3 requests sent (each once, retries not counted): the bucket import benchmark reports it. */
  requests = 0;

  constructor(
    readonly location: BucketLocation,
    private readonly pageSize = 1000,
  ) {
    this.client = new S3Client({
      region: location.region,
      endpoint: location.endpoint,
      forcePathStyle: location.forcePathStyle,
      credentials: location.credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
    });
    this.client.middlewareStack.add((next) => (args) => {
      this.requests++;
      return next(args);
    }, { step: 'initialize', name: 'countRequests' });
    this.http = new S3Http(location);
  }

  /** The prefix as listed: '' or `prefix/`. */
  private get listPrefix(): string {
    return this.location.prefix ? `${this.location.prefix}/` : '';
  }

  /** Every object under the prefix, a page (up to `pageSize` objects) at a time, in key order. */
  async *pages(): AsyncGenerator<BucketObject[]> {
    let ContinuationToken: string | undefined;
    do {
      const res = await this.client.send(new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.listPrefix, ContinuationToken, MaxKeys: this.pageSize }));
      const page = (res.Contents ?? []).flatMap((o) => (o.Key && !o.Key.endsWith('/') ? [{ key: o.Key, size: o.Size ?? 0, etag: o.ETag ?? '', modifiedMs: o.LastModified?.getTime() ?? 0 }] : []));
      if (page.length > 0) yield page;
      ContinuationToken = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  /** One listing request: throws what the server answered when the bucket cannot be listed with these credentials. */
  async probe(): Promise<number> {
    const res = await this.client.send(new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.listPrefix, MaxKeys: 1 }));
    return res.KeyCount ?? res.Contents?.length ?? 0;
  }

  async get(key: string, etag: string | null = null): Promise<Buffer> {
    return this.http.bytes(this.request('GET', key, etag)).catch((err) => Promise.reject(missingOr(err, key)));
  }

  stream(key: string, range: { start: number; end: number } | undefined, etag: string | null = null): Readable {
    const request = this.request('GET', key, etag);
    if (range) request.headers.range = `bytes=${range.start}-${range.end}`;
    return this.http.stream(request, (err) => missingOr(err, key) as Error);
  }

  async size(key: string, etag: string | null = null): Promise<number | null> {
    try {
      return Number((await this.http.headers(this.request('HEAD', key, etag)))['content-length'] ?? 0);
    } catch (err) {
      if (isGone(err)) return null;
      throw err;
    }
  }

  /** A request for the object `key`, only while its ETag is `etag` when one is given; counted. */
  private request(method: 'GET' | 'HEAD', key: string, etag: string | null): S3ObjectRequest & { headers: Record<string, string> } {
    this.requests++;
    return { method, key, headers: etag ? { 'if-match': etag } : {} };
  }

  /** A BlobStore writing under the bucket's prefix (Versa's own key layout below it: `exports/…`, `versions/…`). */
  target(): BlobStore {
    const config: S3BlobStoreConfig = {
      kind: 's3',
      bucket: this.location.bucket,
      prefix: this.location.prefix,
      endpoint: this.location.endpoint,
      region: this.location.region,
      forcePathStyle: this.location.forcePathStyle,
      checksums: 'WHEN_REQUIRED',
      credentials: this.location.credentials,
    };
    return new S3BlobStore(config);
  }

  destroy(): void {
    this.client.destroy();
  }
}

/** A missing object, or one replaced since (If-Match failed); a missing bucket is a configuration error. */
const isGone = (err: unknown): boolean => {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return (status === 404 && (err as Error).name !== 'NoSuchBucket') || status === 412;
};

const missingOr = (err: unknown, key: string): unknown => (isGone(err) ? missingBlob(key) : err);
