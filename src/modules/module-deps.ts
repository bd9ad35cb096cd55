import type { OrgAccess } from '../access/org-access.js';
import type { ProjectAccess } from '../access/project-access.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Transactions } from '../db/transactions.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { Metrics } from '../lib/metrics.js';
import type { PluginRegistry } from '../plugins/plugin-registry.js';
import type { BlobStore } from '../storage/blob-store.js';

/**
 * What app.ts hands every module's entry, `register<Name>Module(app, deps)`: configuration, the database, storage,
 * the job queue, the access checks and the shared services. A module builds its own repositories and services from
 * these and returns what it offers others (or nothing).
 *
 * `Services` is the module's port: the shared services it takes, declared in its own index.ts (`ModuleDeps<{ readonly
 * locks: LockGuard }>`), so this contract names no module. app.ts builds each shared service once (its SharedServices)
 * and hands every module the same object; the type checker holds it to each module's declaration.
 */
export interface ModuleDeps<Services = unknown> {
  readonly config: Config;
  readonly db: Db;
  /** For long read-only scans such as streaming exports (see DatabaseHandle.scanDb). */
  readonly scanDb: Db;
  /** For services whose unit of work spans repositories (see src/db/transactions.ts). */
  readonly transactions: Transactions;
  readonly blobs: BlobStore;
  readonly queue: JobQueue;
  readonly access: ProjectAccess;
  readonly orgAccess: OrgAccess;
  readonly services: Services;
  /** The one plugin registry: built-in catalogs, pipeline step types, PLUGINS_DIR plugins. */
  readonly plugins: PluginRegistry;
  /** This app's Prometheus metrics (`GET /metrics`). */
  readonly metrics: Metrics;
}
