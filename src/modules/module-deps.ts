import type { ImageLookup } from '../access/image-lookup.repository.js';
import type { OrgAccess } from '../access/org-access.js';
import type { ProjectAccess } from '../access/project-access.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Transactions } from '../db/transactions.js';
import type { WriteBatcher } from '../db/write-batcher.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { Metrics } from '../lib/metrics.js';
import type { PluginRegistry } from '../plugins/plugin-registry.js';
import type { BlobClaims } from '../storage/blob-claims.js';
import type { ImageIngest } from './images/image-ingest.service.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { AnnotationsRepository } from './annotations/annotations.repository.js';
import type { AnnotationsService } from './annotations/annotations.service.js';
import type { AssignmentScope } from './assignments/assignment-scope.service.js';
import type { ClassesRepository } from './classes/classes.repository.js';
import type { ImageWorkflow, LockGuard } from './locks/lock-guard.service.js';
import type { ModelRuntime } from './models/model-runtime.adapter.js';
import type { ModelsRepository } from './models/models.repository.js';
import type { ReadinessProbe } from './platform/platform.service.js';
import type { ProjectsRepository } from './projects/projects.repository.js';
import type { ProjectsService } from './projects/projects.service.js';
import type { ImageFeatureRecorder } from './quality/image-features.service.js';
import type { RevisionsRepository } from './revisions/revisions.repository.js';
import type { SampleWorkflow } from './samples/samples.service.js';

/**
 * The pieces more than one module uses, each built exactly once by the composition root (src/app.ts). A module takes
 * what it needs from here and never constructs another module's services: one lock guard, one assignment scope, one
 * team workflow per kind of item, one group-commit WriteBatcher ("one batch at a time" holds process-wide, for
 * annotation and sample writes alike), one image feature recorder, one model runtime.
 */
export interface SharedServices {
  /**
   * The team workflow (who sees an item, its lock, who may be assigned, what a review decision needs), one rule set
   * over two kinds of item: images and samples.
   */
  readonly workflow: { readonly images: ImageWorkflow; readonly samples: SampleWorkflow };
  /** Group commit for small, frequent writes (annotations, sample labels). */
  readonly writes: WriteBatcher;
  /** Measures image features at upload and fills the ones missing when a check needs them. */
  readonly features: ImageFeatureRecorder;
  /** Refuses writes to images another user has locked. */
  readonly locks: LockGuard;
  /** Keeps annotators of assigned-only projects to their images. */
  readonly scope: AssignmentScope;
  /**
   * The content-addressed image files requests of this process are writing (uploads, imports into a project): a
   * failing writer removes a file only when no other one holds it.
   */
  readonly blobClaims: BlobClaims;
  /** The one ingest path of an image file (uploads and imports): check, decode, thumbnail, both files. */
  readonly ingest: ImageIngest;
  /** Finds an image with its project's owner (modules acting on one image check access with it). */
  readonly images: ImageLookup;
  /** The revision log every annotation write appends to in its own unit of work. */
  readonly revisions: RevisionsRepository;
  /** Annotation reads and writes (group commit); the annotations routes and model output both go through it. */
  readonly annotations: AnnotationsService;
  readonly annotationsRepository: AnnotationsRepository;
  readonly classesRepository: ClassesRepository;
  readonly projectsRepository: ProjectsRepository;
  /** Projects: their routes, and the instance statistics the platform module reports. */
  readonly projects: ProjectsService;
  /** The model registry's inference runtime (one set of session pools per process) and its repository. */
  readonly models: { readonly runtime: ModelRuntime; readonly repository: ModelsRepository };
  /** What `/api/ready` checks (database, and Redis when configured). */
  readonly probes: readonly ReadinessProbe[];
}

/**
 * What app.ts hands every module's entry, `register<Name>Module(app, deps)`: configuration, the database, storage,
 * the job queue, the access checks and the shared services. A module builds its own repositories and services from
 * these and returns what it offers others (or nothing).
 */
export interface ModuleDeps {
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
  readonly services: SharedServices;
  /** The one plugin registry: built-in catalogs, pipeline step types, PLUGINS_DIR plugins. */
  readonly plugins: PluginRegistry;
  /** This app's Prometheus metrics (`GET /metrics`). */
  readonly metrics: Metrics;
}
