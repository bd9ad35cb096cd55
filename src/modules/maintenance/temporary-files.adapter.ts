import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * This machine's temporary area (DATA_DIR/tmp: spooled uploads, unpacked imports, frame extraction), swept after a
 * crash. Stored files are not here: the sweep lists those through the BlobStore, whichever one runs.
 */
export class TemporaryFiles {
  constructor(private readonly tempRoot: string) {}

  /**
   * Removes what in the temporary area was not written since `cutoff`; returns how many files and folders. A folder
   * written since (a live import touches its folders) is left whole; in an older one, only old entries go (a folder
   * shared by many requests, such as model-uploads, keeps the spool files of uploads in flight), and it goes itself
   * once empty.
   */
  async removeStale(cutoff: number, dir = this.tempRoot): Promise<number> {
    let removed = 0;
    for (const name of await names(dir)) {
      const path = join(dir, name);
      const info = await stat(path).catch(() => null);
      if (!info || info.mtimeMs >= cutoff) continue;
      if (info.isDirectory()) {
        removed += await this.removeStale(cutoff, path);
        if ((await names(path)).length === 0) {
          await rm(path, { recursive: true, force: true });
          removed++;
        }
      } else {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
