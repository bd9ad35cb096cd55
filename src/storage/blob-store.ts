import type { Readable } from 'node:stream';

/**
 * Where file bytes live: a local folder or an S3 bucket (src/storage/open-blob-store.ts picks one from the config;
 * nothing outside src/storage knows which). Keys are made by the services from ids and hashes only (never from user
 * input) and are checked by `assertBlobKey` before any implementation touches storage. Reading a missing key fails
 * with an error whose `code` is 'ENOENT', whichever store runs. test/storage/blob-store-contract.test.ts holds both
 * stores to this contract.
 */
export interface BlobStore {
  /** Writes atomically: readers see the whole object or nothing. */
  put(key: string, data: Buffer | Uint8Array): Promise<void>;
  /** Writes a stream atomically; returns the byte count. */
  putStream(key: string, data: Readable): Promise<number>;
  get(key: string): Promise<Buffer>;
  /** The bytes, or only `start`..`end` (inclusive, as HTTP ranges count) when a range is given. */
  stream(key: string, range?: { start: number; end: number }): Readable;
  /** Size in bytes, or null when absent. */
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /** Removes every object whose key starts with `prefix/`. */
  deletePrefix(prefix: string): Promise<void>;
  /** Every object whose key starts with `prefix/`, in no particular order, with when it was last written. */
  list(prefix: string): AsyncIterable<StoredBlob>;
  /**
   * Removes writes a crash left unfinished (a temporary file, an S3 multipart upload) begun before `beforeMs`;
   * returns how many. Writes in flight elsewhere began later than the caller's grace period and are left alone.
   */
  removeUnfinishedWrites(beforeMs: number): Promise<number>;
  /**
   * The object's file on this machine, for stores that keep files (trainers hard-link them); absent otherwise, and
   * null for a key whose bytes are elsewhere (an image imported by reference lives in its project storage's bucket).
   */
  localPath?(key: string): string | null;
}

export interface StoredBlob {
  key: string;
  size: number;
  modifiedMs: number;
}

const KEY = /^[a-z0-9_-]+(\/[a-zA-Z0-9_-][a-zA-Z0-9_.-]*)*$/;

export function assertBlobKey(key: string): void {
  if (!KEY.test(key) || key.includes('..') || key.length > 512) throw new Error(`invalid blob key "${key}"`);
}

/** The error every store gives for a missing key (a local file's ENOENT, an S3 NoSuchKey). */
export function missingBlob(key: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`no blob "${key}"`), { code: 'ENOENT' });
}
