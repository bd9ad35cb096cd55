import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECTS_PREFIX, projectBlobPrefix, versionPrefix, versionsPrefix } from '../../storage/keys.js';

/** A stored file by its blob key, with when it was last written. */
export interface StoredFile {
  key: string;
  mtimeMs: number;
}

/**
 * The local blob store's files and the temporary area, listed for the sweep (the blob store itself has no listing).
 * Only names this adapter reads from disk are used: project ids and version numbers must be plain integers.
 */
export class StoredFiles {
  constructor(
    private readonly blobRoot: string,
    private readonly tempRoot: string,
  ) {}

  /**
   * Removes what in the temporary area was not written since `cutoff`; returns how many files and folders. A folder
   * written since (a live import touches its folders) is left whole; in an older one, only old entries go (a folder
   * shared by many requests, such as model-uploads, keeps the spool files of uploads in flight), and it goes itself
   * once empty.
   */
  async removeStaleTemporary(cutoff: number, dir = this.tempRoot): Promise<number> {
    let removed = 0;
    for (const name of await names(dir)) {
      const path = join(dir, name);
      const info = await stat(path).catch(() => null);
      if (!info || info.mtimeMs >= cutoff) continue;
      if (info.isDirectory()) {
        removed += await this.removeStaleTemporary(cutoff, path);
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

  async projectIds(): Promise<number[]> {
    return (await names(join(this.blobRoot, PROJECTS_PREFIX))).filter((name) => /^\d+$/.test(name)).map(Number);
  }

  async versionNumbers(projectId: number): Promise<number[]> {
    return (await names(join(this.blobRoot, versionsPrefix(projectId)))).filter((name) => /^\d+$/.test(name)).map(Number);
  }

  async removeProject(projectId: number): Promise<number> {
    const count = (await this.projectFiles(projectId)).length;
    await rm(join(this.blobRoot, projectBlobPrefix(projectId)), { recursive: true, force: true });
    return count;
  }

  async removeVersion(projectId: number, number: number): Promise<number> {
    await rm(join(this.blobRoot, versionPrefix(projectId, number)), { recursive: true, force: true });
    return 1;
  }

  /** Every file of a project, outside its versions' folders (those are removed whole with their version). */
  async projectFiles(projectId: number): Promise<StoredFile[]> {
    const files: StoredFile[] = [];
    const walk = async (relative: string): Promise<void> => {
      const entries = await readdir(join(this.blobRoot, relative), { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const key = `${relative}/${entry.name}`;
        if (entry.isDirectory()) {
          if (key !== versionsPrefix(projectId)) await walk(key);
        } else if (entry.isFile()) {
          const info = await stat(join(this.blobRoot, key)).catch(() => null);
          if (info) files.push({ key, mtimeMs: info.mtimeMs });
        }
      }
    };
    await walk(projectBlobPrefix(projectId));
    return files;
  }

  async remove(key: string): Promise<void> {
    await rm(join(this.blobRoot, key), { force: true });
  }
}

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
