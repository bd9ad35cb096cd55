import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

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

  /** Removes every entry of the temporary area not written since `cutoff`; returns how many. */
  async removeStaleTemporary(cutoff: number): Promise<number> {
    let removed = 0;
    for (const name of await names(this.tempRoot)) {
      const path = join(this.tempRoot, name);
      const info = await stat(path).catch(() => null);
      if (info && info.mtimeMs < cutoff) {
        await rm(path, { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
  }

  async projectIds(): Promise<number[]> {
    return (await names(join(this.blobRoot, 'projects'))).filter((name) => /^\d+$/.test(name)).map(Number);
  }

  async versionNumbers(projectId: number): Promise<number[]> {
    return (await names(join(this.blobRoot, 'projects', String(projectId), 'versions'))).filter((name) => /^\d+$/.test(name)).map(Number);
  }

  async removeProject(projectId: number): Promise<number> {
    const count = (await this.projectFiles(projectId)).length;
    await rm(join(this.blobRoot, 'projects', String(projectId)), { recursive: true, force: true });
    return count;
  }

  async removeVersion(projectId: number, number: number): Promise<number> {
    await rm(join(this.blobRoot, 'projects', String(projectId), 'versions', String(number)), { recursive: true, force: true });
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
          if (key !== `projects/${projectId}/versions`) await walk(key);
        } else if (entry.isFile()) {
          const info = await stat(join(this.blobRoot, key)).catch(() => null);
          if (info) files.push({ key, mtimeMs: info.mtimeMs });
        }
      }
    };
    await walk(`projects/${projectId}`);
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
