import type { Readable } from 'node:stream';

/**
 * Where file bytes live. Keys are made by the services from ids and hashes only (never from user input) and are
 * checked by `assertBlobKey` before any implementation touches storage.
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
  /** The object's file on this machine, for stores that keep files (trainers hard-link them); absent otherwise. */
  localPath?(key: string): string;
}

const KEY = /^[a-z0-9_-]+(\/[a-zA-Z0-9_-][a-zA-Z0-9_.-]*)*$/;

export function assertBlobKey(key: string): void {
  if (!KEY.test(key) || key.includes('..') || key.length > 512) throw new Error(`invalid blob key "${key}"`);
}
