import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';

/**
 * The local folder of a video's decoding, made empty: named by the video, so the next attempt after a crash removes
 * what the killed one left there.
 */
export async function workFolder(workDir: string, name: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = join(workDir, name);
  const remove = () => rm(dir, { recursive: true, force: true });
  await remove();
  await mkdir(dir, { recursive: true });
  return { dir, remove };
}

export const openFile = (path: string): Readable => createReadStream(path);

/** The SHA-256 (hex) of a file, streamed. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}
