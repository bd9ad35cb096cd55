import type { BlobStore } from '../../storage/blob-store.js';
import { deleteProjectFiles, deleteVersionFiles } from '../../storage/lifecycle.js';
import { PROJECTS_PREFIX } from '../../storage/keys.js';
import type { MaintenanceRepository } from './maintenance.repository.js';
import type { TemporaryFiles } from './temporary-files.adapter.js';

export interface SweepReport {
  /** Temporary files and folders removed (DATA_DIR/tmp, unfinished writes of the blob store). */
  temporary: number;
  /** Blobs no row refers to. */
  orphans: number;
}

/** Folders of a project whose files are named by the rows that use them; anything else in a project is left alone. */
const SWEPT_FOLDERS = new Set(['images', 'thumbs', 'models', 'exports']);

interface ProjectBlobs {
  /** Version numbers that have files. */
  versions: Set<number>;
  /** The project's other files (outside its versions' folders), with when each was last written. */
  files: { key: string; modifiedMs: number }[];
}

/**
 * The clean-up after crashes: a kill -9 leaves temporary files and blobs whose rows were never written. Stored files
 * are listed through the BlobStore (the local folder or the bucket every process shares), so any process's sweep sees
 * what every other process wrote. Safe and idempotent: a file is removed only when nothing refers to it and it has not
 * been written for `graceSeconds` (so a write in flight in another process, whose row is not committed yet, is never
 * taken), or when its whole project or version is gone.
 */
export class MaintenanceService {
  constructor(
    private readonly repository: MaintenanceRepository,
    private readonly blobs: BlobStore,
    private readonly temporary: TemporaryFiles,
    private readonly graceSeconds: number,
  ) {}

  async sweep(): Promise<SweepReport> {
    const report: SweepReport = { temporary: 0, orphans: 0 };
    const cutoff = Date.now() - this.graceSeconds * 1000;
    report.temporary += await this.temporary.removeStale(cutoff);
    report.temporary += await this.blobs.removeUnfinishedWrites(cutoff);
    for (const [projectId, stored] of await this.projects()) {
      if (!(await this.repository.projectExists(projectId))) {
        await deleteProjectFiles(this.blobs, projectId);
        report.orphans += stored.files.length + stored.versions.size;
        continue;
      }
      const versions = await this.repository.versionNumbers(projectId);
      for (const number of stored.versions) {
        if (versions.has(number)) continue;
        await deleteVersionFiles(this.blobs, projectId, number);
        report.orphans++;
      }
      const { keys } = await this.repository.referencedKeys(projectId);
      for (const file of stored.files) {
        if (file.modifiedMs >= cutoff || !SWEPT_FOLDERS.has(file.key.split('/')[2]) || keys.has(file.key)) continue;
        await this.blobs.delete(file.key);
        report.orphans++;
      }
    }
    return report;
  }

  /** Every project with stored files, by the keys the store lists (`projects/{id}/…`; other names are left alone). */
  private async projects(): Promise<Map<number, ProjectBlobs>> {
    const projects = new Map<number, ProjectBlobs>();
    for await (const blob of this.blobs.list(PROJECTS_PREFIX)) {
      const [, id, folder, number] = blob.key.split('/');
      if (!/^\d+$/.test(id ?? '')) continue;
      let project = projects.get(Number(id));
      if (!project) projects.set(Number(id), (project = { versions: new Set(), files: [] }));
      if (folder === 'versions') {
        if (/^\d+$/.test(number ?? '')) project.versions.add(Number(number));
      } else {
        project.files.push({ key: blob.key, modifiedMs: blob.modifiedMs });
      }
    }
    return projects;
  }
}
