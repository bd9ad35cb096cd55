import type { OrgAccess } from '../access/org-access.js';
import type { ProjectAccess } from '../access/project-access.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { PluginRegistry } from '../plugins/plugin-registry.js';
import type { BlobStore } from '../storage/blob-store.js';

/** What app.ts hands every module: each module builds its own repositories and services from these. */
export interface ModuleDeps {
  readonly config: Config;
  readonly db: Db;
  readonly blobs: BlobStore;
  readonly queue: JobQueue;
  readonly access: ProjectAccess;
  readonly orgAccess: OrgAccess;
  /** The one plugin registry: built-in catalogs, pipeline step types, PLUGINS_DIR plugins. */
  readonly plugins: PluginRegistry;
}
