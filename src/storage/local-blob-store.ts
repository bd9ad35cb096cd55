import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertBlobKey, type BlobStore, type StoredBlob } from './blob-store.js';

const TEMP_SUFFIX = '.tmp';
const TEMP = /\.[0-9a-f]{12}\.tmp$/;

/** Blobs as files under `root` (DATA_DIR/blobs). Writes go to a temporary file that is renamed into place. */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  localPath(key: string): string {
    return this.path(key);
  }

  private path(key: string): string {
    assertBlobKey(key);
    return join(this.root, key);
  }

  private temp(key: string): { final: string; temp: string } {
    const final = this.path(key);
    return { final, temp: `${final}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}` };
  }

  async put(key: string, data: Buffer | Uint8Array): Promise<void> {
    const { final, temp } = this.temp(key);
    try {
      // Most blobs go into folders that exist already (two per uploaded image): make the folder only when missing.
      await writeFile(temp, data).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        await mkdir(dirname(final), { recursive: true });
        await writeFile(temp, data);
      });
      await rename(temp, final);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async putStream(key: string, data: Readable): Promise<number> {
    const { final, temp } = this.temp(key);
    await mkdir(dirname(final), { recursive: true });
    let bytes = 0;
    data.on('data', (chunk: Buffer) => (bytes += chunk.length));
    try {
      await pipeline(data, createWriteStream(temp));
      await rename(temp, final);
      return bytes;
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  get(key: string): Promise<Buffer> {
    return readFile(this.path(key));
  }

  stream(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.path(key), range);
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.path(prefix), { recursive: true, force: true });
  }

  async *list(prefix: string): AsyncIterable<StoredBlob> {
    const dir = this.path(prefix);
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
      throw err;
    });
    for (const entry of entries) {
      if (!entry.isFile() || TEMP.test(entry.name)) continue;
      const path = join(entry.parentPath, entry.name);
      const info = await stat(path).catch(() => null); // removed since the listing
      if (info) yield { key: relative(this.root, path).split(sep).join('/'), size: info.size, modifiedMs: info.mtimeMs };
    }
  }

  async removeUnfinishedWrites(beforeMs: number): Promise<number> {
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true }).catch(() => []);
    let removed = 0;
    for (const entry of entries) {
      if (!entry.isFile() || !TEMP.test(entry.name)) continue;
      const path = join(entry.parentPath, entry.name);
      const info = await stat(path).catch(() => null);
      if (info && info.mtimeMs < beforeMs) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }
}
