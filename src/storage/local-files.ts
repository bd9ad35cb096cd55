/**
 * The server's own working files on local disk (uploads spooled to DATA_DIR/tmp, extracted archives, training run
 * folders, dataset folders under IMPORT_ROOT): every file-system call the services make goes through here, as every
 * stored file goes through the BlobStore.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Writes a stream (a stored object's, say) to a local file. */
export async function writeFileFrom(path: string, data: Readable): Promise<void> {
  await pipeline(data, createWriteStream(path));
}

/** Makes a folder (and its parents) if missing. */
export async function ensureFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}

/** An empty folder at `dir`, whatever was there before. */
export async function freshFolder(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
}

/** Removes a file or folder if present; never throws. */
export async function removePath(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true }).catch(() => undefined);
}

export async function writeJsonFile(path: string, value: unknown): Promise<void> {
  await writeFile(path, JSON.stringify(value));
}

export function readStream(path: string): Readable {
  return createReadStream(path);
}

/** The path with every link resolved (throws when it does not exist). */
export function resolvedPath(path: string): Promise<string> {
  return realpath(path);
}

/** Marks folders as in use now (the sweep of DATA_DIR/tmp leaves recently touched entries alone); never throws. */
export function touch(...paths: string[]): void {
  const now = new Date();
  for (const path of paths) void utimes(path, now, now).catch(() => undefined);
}

/** The size of a regular file (links are not followed), or null when there is no regular file at `path`. */
export async function regularFileSize(path: string): Promise<number | null> {
  const stat = await lstat(path).catch(() => null);
  return stat && stat.isFile() ? stat.size : null;
}

/** The first `length` bytes of a file (fewer when it is shorter). */
export async function readHead(path: string, length: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Every regular file under `root`, as `/`-separated paths relative to it. */
export async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'));
}
