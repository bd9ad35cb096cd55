import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';

/** The local files of a video's decoding: a private folder, the source copied in, each frame read back. */
export async function workFolder(workDir: string, prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  await mkdir(workDir, { recursive: true });
  const dir = await mkdtemp(join(workDir, prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeFileFrom(path: string, data: Readable): Promise<void> {
  await pipeline(data, createWriteStream(path));
}

export const readFrameFile = (path: string): Promise<Buffer> => readFile(path);

export const openFile = (path: string): Readable => createReadStream(path);

/** The SHA-256 (hex) of a file, streamed. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}
