import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { missingBlob, type BlobStore, type StoredBlob } from './blob-store.js';
import { parseStorageObjectBlobKey } from './keys.js';

/** How the bytes of a project storage's objects are read (the storages module gives one per storage). */
export interface ObjectSource {
  get(objectKey: string, etag: string | null): Promise<Buffer>;
  stream(objectKey: string, range: { start: number; end: number } | undefined, etag: string | null): Readable;
  size(objectKey: string, etag: string | null): Promise<number | null>;
}

/** The source of a storage, or null when the storage is gone (its objects then read as missing). */
export type ObjectSources = (storageId: number) => Promise<ObjectSource | null>;

/**
 * Versa's store, plus the objects of project storages that images imported by reference point at (`storages/…` keys,
 * see keys.ts): those are read from their bucket, and never written or deleted (an image's delete leaves the user's
 * object alone). Every other key, and every prefix operation, is the inner store's: so no caller knows where an
 * image's original lives.
 */
export class SourcedBlobStore implements BlobStore {
  readonly localPath?: (key: string) => string | null;

  constructor(
    private readonly inner: BlobStore,
    private readonly sources: ObjectSources,
  ) {
    const innerPath = inner.localPath?.bind(inner);
    if (innerPath) this.localPath = (key) => (parseStorageObjectBlobKey(key) ? null : innerPath(key));
  }

  private async source(key: string): Promise<{ source: ObjectSource; objectKey: string; etag: string | null } | null> {
    const ref = parseStorageObjectBlobKey(key);
    if (!ref) return null;
    const source = await this.sources(ref.storageId);
    if (!source) throw missingBlob(key);
    return { source, objectKey: ref.objectKey, etag: ref.etag };
  }

  put(key: string, data: Buffer | Uint8Array): Promise<void> {
    if (parseStorageObjectBlobKey(key)) return Promise.reject(new Error(`a project storage's object is never written: ${key}`));
    return this.inner.put(key, data);
  }

  putStream(key: string, data: Readable): Promise<number> {
    if (parseStorageObjectBlobKey(key)) return Promise.reject(new Error(`a project storage's object is never written: ${key}`));
    return this.inner.putStream(key, data);
  }

  async get(key: string): Promise<Buffer> {
    const ref = await this.source(key);
    return ref ? ref.source.get(ref.objectKey, ref.etag) : this.inner.get(key);
  }

  stream(key: string, range?: { start: number; end: number }): Readable {
    if (!parseStorageObjectBlobKey(key)) return this.inner.stream(key, range);
    const out = new PassThrough();
    this.source(key)
      .then((ref) => pipeline(ref!.source.stream(ref!.objectKey, range, ref!.etag), out))
      .catch((err) => out.destroy(err));
    return out;
  }

  async size(key: string): Promise<number | null> {
    const ref = await this.source(key).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (ref === undefined) return null;
    return ref ? ref.source.size(ref.objectKey, ref.etag) : this.inner.size(key);
  }

  /** The user's objects stay: only Versa's own files are deleted. */
  async delete(key: string): Promise<void> {
    if (!parseStorageObjectBlobKey(key)) await this.inner.delete(key);
  }

  deletePrefix(prefix: string): Promise<void> {
    return this.inner.deletePrefix(prefix);
  }

  list(prefix: string): AsyncIterable<StoredBlob> {
    return this.inner.list(prefix);
  }

  removeUnfinishedWrites(beforeMs: number): Promise<number> {
    return this.inner.removeUnfinishedWrites(beforeMs);
  }
}
