import type { MaintenanceRepository } from './maintenance.repository.js';
import type { StoredFiles } from './stored-files.adapter.js';

export interface SweepReport {
  /** Temporary files and folders removed (DATA_DIR/tmp, unfinished `.tmp` blobs). */
  temporary: number;
  /** Blobs no row refers to. */
  orphans: number;
}

/** Folders of a project whose files are named by the rows that use them; anything else in a project is left alone. */
const SWEPT_FOLDERS = new Set(['images', 'thumbs', 'models', 'exports']);

/**
 * The clean-up after crashes: a kill -9 leaves temporary files and blobs whose rows were never written. Safe and
 * idempotent: a file is removed only when nothing refers to it and it has not been written for `graceSeconds` (so a
 * write in flight in another process, whose row is not committed yet, is never taken), or when its whole project or
 * version is gone.
 */
export class MaintenanceService {
  constructor(
    private readonly repository: MaintenanceRepository,
    private readonly files: StoredFiles,
    private readonly graceSeconds: number,
  ) {}

  async sweep(): Promise<SweepReport> {
    const report: SweepReport = { temporary: 0, orphans: 0 };
    const cutoff = Date.now() - this.graceSeconds * 1000;
    report.temporary += await this.files.removeStaleTemporary(cutoff);
    for (const projectId of await this.files.projectIds()) {
      if (!(await this.repository.projectExists(projectId))) {
        report.orphans += await this.files.removeProject(projectId);
        continue;
      }
      const versions = await this.repository.versionNumbers(projectId);
      for (const number of await this.files.versionNumbers(projectId)) {
        if (!versions.has(number)) report.orphans += await this.files.removeVersion(projectId, number);
      }
      const { keys } = await this.repository.referencedKeys(projectId);
      for (const file of await this.files.projectFiles(projectId)) {
        if (file.mtimeMs >= cutoff) continue;
        if (file.key.endsWith('.tmp')) {
          await this.files.remove(file.key);
          report.temporary++;
        } else if (SWEPT_FOLDERS.has(file.key.split('/')[2]) && !keys.has(file.key)) {
          await this.files.remove(file.key);
          report.orphans++;
        }
      }
    }
    return report;
  }
}
