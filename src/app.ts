import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import { AccessRepository } from './access/access.repository.js';
import { ImageLookup } from './access/image-lookup.repository.js';
import { OrgAccess } from './access/org-access.js';
import { ProjectAccess } from './access/project-access.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { registerAuthentication } from './http/authenticate.js';
import { validationOptions } from './http/validation.js';
import { clientErrorHandler, registerErrorHandler } from './http/error-handler.js';
import { registerInputGuard } from './http/input-guard.js';
import { registerMultipartBodies } from './http/multipart-request.js';
import { registerOpenApi } from './http/openapi.js';
import { registerRequestMetrics } from './http/request-metrics.js';
import { Metrics } from './lib/metrics.js';
import { InProcessQueue } from './jobs/in-process-queue.js';
import type { JobQueue } from './jobs/job-queue.js';
import { JobsRepository } from './jobs/jobs.repository.js';
import { transactionsOf } from './db/transactions.js';
import { WriteBatcher } from './db/write-batcher.js';
import { AnnotationsRepository } from './modules/annotations/annotations.repository.js';
import { AnnotationsService } from './modules/annotations/annotations.service.js';
import { registerAdaptersModule } from './modules/adapters/index.js';
import { registerAnnotationsModule } from './modules/annotations/index.js';
import { AssignmentScope } from './modules/assignments/assignment-scope.service.js';
import { AssignmentsRepository } from './modules/assignments/assignments.repository.js';
import { registerAssignmentsModule } from './modules/assignments/index.js';
import { registerNextToLabelModule } from './modules/next-to-label/index.js';
import { registerSuggestionsModule } from './modules/suggestions/index.js';
import { registerAuthModule } from './modules/auth/index.js';
import type { LoginClock } from './modules/auth/login-throttle.service.js';
import { registerAutoAnnotateModule } from './modules/auto-annotate/index.js';
import { ClassesRepository } from './modules/classes/classes.repository.js';
import { registerClassesModule } from './modules/classes/index.js';
import { registerExperimentsModule } from './modules/experiments/index.js';
import { registerExportsModule } from './modules/exports/index.js';
import { registerImagesModule } from './modules/images/index.js';
import { registerImportsModule } from './modules/imports/index.js';
import { registerJobsModule } from './modules/jobs/index.js';
import { ImageItemsRepository } from './modules/locks/image-items.repository.js';
import { registerLocksModule } from './modules/locks/index.js';
import { LockGuard, type ImageWorkflow } from './modules/locks/lock-guard.service.js';
import { LocksRepository } from './modules/locks/locks.repository.js';
import { registerMaintenanceModule } from './modules/maintenance/index.js';
import { registerMembersModule } from './modules/members/index.js';
import { registerInvitationsModule } from './modules/invitations/index.js';
import { registerModelsModule } from './modules/models/index.js';
import { ModelRuntime } from './modules/models/model-runtime.adapter.js';
import { ModelsRepository } from './modules/models/models.repository.js';
import type { ModuleDeps } from './modules/module-deps.js';
import { registerTrainingModule } from './modules/training/index.js';
import type { TrainingService } from './modules/training/training.service.js';
import { TrainRequest } from './modules/training/training.schemas.js';
import { registerOrgsModule } from './modules/orgs/index.js';
import { registerPagesModule } from './modules/pages/index.js';
import { registerPlatformModule } from './modules/platform/index.js';
import type { ReadinessProbe } from './modules/platform/platform.service.js';
import { registerProjectsModule } from './modules/projects/index.js';
import { ProjectsRepository } from './modules/projects/projects.repository.js';
import { ProjectsService } from './modules/projects/projects.service.js';
import { registerReviewsModule } from './modules/reviews/index.js';
import { registerRevisionsModule } from './modules/revisions/index.js';
import { RevisionsRepository } from './modules/revisions/revisions.repository.js';
import { ImageFeaturesRepository } from './modules/quality/image-features.repository.js';
import { ImageFeatureRecorder } from './modules/quality/image-features.service.js';
import { registerCanonicalModule } from './modules/canonical/index.js';
import { registerCleaningModule, type CleaningModule } from './modules/cleaning/index.js';
import { registerProfileModule } from './modules/profile/index.js';
import { registerQualityModule, type QualityModule } from './modules/quality/index.js';
import { registerQualityControlModule } from './modules/quality-control/index.js';
import { registerReadinessModule } from './modules/readiness/index.js';
import type { QualityBody } from './modules/quality/quality.schemas.js';
import { registerSamplesModule } from './modules/samples/index.js';
import type { SampleWorkflow } from './modules/samples/samples.service.js';
import { SampleItemsRepository } from './modules/samples/sample-items.repository.js';
import { registerPipelinesModule, WebhookSender, type PipelinePorts } from './modules/pipelines/index.js';
import { Value } from 'typebox/value';
import { ValidationError } from './http/errors.js';
import { registerPluginsModule } from './modules/plugins/index.js';
import { registerSplitsModule } from './modules/splits/index.js';
import { registerVersionsModule } from './modules/versions/index.js';
import { registerVideosModule } from './modules/videos/index.js';
import { registerTracksModule } from './modules/tracks/index.js';
import { registerTrackSuggestionsModule } from './modules/track-suggestions/index.js';
import { ItemWorkflow } from './modules/workflow/item-workflow.service.js';
import { configureSharp } from './imaging/sharp-config.js';
import { registerBuiltinPlugins, registerCatalogPlugins } from './plugins/builtin-catalog.js';
import { ADAPTERS } from './training/adapters.js';
import { loadPluginDirectory } from './plugins/plugin-loader.js';
import { PluginRegistry } from './plugins/plugin-registry.js';
import { BlobClaims } from './storage/blob-claims.js';
import { BlobClaimsRepository } from './modules/maintenance/blob-claims.repository.js';
import { ImageIngest } from './modules/images/image-ingest.service.js';
import { openBlobStore } from './storage/open-blob-store.js';
import { MeteredBlobStore } from './storage/metered-blob-store.js';
import { VERSION } from './version.js';
import { SecretBox } from './lib/secret-box.js';
import { SourcedBlobStore } from './storage/sourced-blob-store.js';
import { registerStoragesModule } from './modules/storages/index.js';
import { StorageBuckets } from './modules/storages/storage-buckets.adapter.js';
import { StoragesRepository } from './modules/storages/storages.repository.js';

/** A route as registered: the authorization matrix test walks every one of them. */
export interface RouteEntry {
  readonly method: string;
  readonly url: string;
}

export interface Versa {
  readonly app: FastifyInstance;
  readonly routes: readonly RouteEntry[];
  readonly database: DatabaseHandle;
  readonly deps: ModuleDeps<SharedServices>;
}

/**
 * The pieces more than one module uses, each built exactly once here. A module declares the ones it takes in its
 * entry (its `ModuleDeps<…>`) and never constructs another module's services: one lock guard, one assignment scope, one
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

export interface BuildOptions {
  /** An already-open database (tests open one per file); otherwise one is opened from the config. */
  database?: DatabaseHandle;
  logger?: boolean;
  /** The login throttle's time (tests pass a fake one); the system clock otherwise. */
  loginClock?: LoginClock;
}

/** The composition root: wires database, storage, queue, services and routes. No globals. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<Versa> {
  configureSharp();
  const database = options.database ?? (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl }));
  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel },
    bodyLimit: 16 * 1024 * 1024,
    // X-Forwarded-For is believed only from the configured proxies (TRUST_PROXY); otherwise the client is the peer.
    trustProxy: config.trustProxy,
    ...validationOptions(),
    clientErrorHandler,
  });
  app.addHook('onClose', () => database.close());
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url });
  });

  const db = database.db;
  // One registry per app: several apps may run in one process (tests).
  const metrics = new Metrics();
  // Images imported by reference from a project storage are read from its bucket, through the same store (issue 27).
  const storagesRepository = new StoragesRepository(db);
  // Secrets kept in the database (storage credentials, invitation links) are sealed with SECRETS_KEY where it is set.
  const secrets = config.secretsKey ? new SecretBox(config.secretsKey) : null;
  const storageBuckets = new StorageBuckets(storagesRepository, secrets);
  const blobs = new MeteredBlobStore(new SourcedBlobStore(await openBlobStore(config.blobStore), (id) => storageBuckets.source(id)), metrics);
  const jobs = new JobsRepository(db);
  metrics.countJobs(() => jobs.depth());
  // The in-process queue's jobs die with their process (those a shutdown released run again, see below). With Redis,
  // other workers' jobs are alive, and BullMQ's own stalled-job check (a lock each worker renews) re-queues those whose
  // worker died: no start-up sweep there.
  if (!config.redisUrl) await jobs.failInterrupted();
  // BullMQ and the Redis clients are loaded only when Redis is configured (about 15 MB of heap a process without
  // Redis would carry for nothing).
  const runner = { jobs, log: app.log, metrics };
  const inProcess = config.redisUrl ? null : new InProcessQueue(runner, 1);
  const queue: JobQueue = inProcess
    ?? new (await import('./jobs/bullmq-queue.js')).BullmqQueue(runner, { redisUrl: config.redisUrl!, prefix: config.queuePrefix, work: config.role !== 'api', lockMs: config.jobLockMs });
  app.addHook('onClose', () => queue.close());

  const projectsRepository = new ProjectsRepository(db);
  const accessRepository = new AccessRepository(db);
  const access = new ProjectAccess(projectsRepository, accessRepository);
  const orgAccess = new OrgAccess(accessRepository);
  // One plugin registry: Versa's own catalogs now, pipeline step types as that module registers, PLUGINS_DIR last.
  const plugins = new PluginRegistry();
  registerBuiltinPlugins(plugins);

  const probes: ReadinessProbe[] = [{ name: 'database', check: () => database.ping() }];
  if (config.redisUrl) {
    const { connectRedis, pingRedis } = await import('./jobs/redis.js');
    const redis = connectRedis(config.redisUrl);
    redis.on('error', (err) => app.log.warn({ err }, 'redis connection error'));
    app.addHook('onClose', () => void redis.disconnect());
    probes.push({ name: 'redis', check: () => pingRedis(redis) });
  }

  const base = { config, db, scanDb: database.scanDb, transactions: transactionsOf(db), blobs, queue, access, orgAccess, plugins, metrics };
  const services = sharedServices(base, projectsRepository, probes);
  app.addHook('onClose', () => services.models.runtime.close());
  const deps: ModuleDeps<SharedServices> = { ...base, services };

  registerErrorHandler(app);
  // A worker answers only its health, readiness and metrics (for the load balancer's and Prometheus's scrapes).
  if (config.role === 'worker') app.addHook('onRequest', workerRoutesOnly);
  registerRequestMetrics(app, metrics);
  registerInputGuard(app);
  await app.register(cookie);
  registerMultipartBodies(app);
  await registerOpenApi(app, VERSION);

  await registerModules(app, deps, { repository: storagesRepository, buckets: storageBuckets, secrets }, options.loginClock);
  // Every handler is registered now: the jobs a shutdown released run again.
  await inProcess?.resume();

  return { app, routes, database, deps };
}

/** Every piece more than one module uses, built exactly once (see SharedServices); the caller closes the model runtime. */
function sharedServices(base: Omit<ModuleDeps, 'services'>, projectsRepository: ProjectsRepository, probes: readonly ReadinessProbe[]): SharedServices {
  const { config, db, blobs, access, orgAccess, metrics } = base;
  const locksRepository = new LocksRepository(db);
  const images = new ImageLookup(db);
  const workflow = {
    images: new ItemWorkflow(access, new ImageItemsRepository(images, new AssignmentsRepository(db), locksRepository)),
    samples: new ItemWorkflow(access, new SampleItemsRepository(db)),
  };
  const writes = new WriteBatcher(db);
  const locks = new LockGuard(locksRepository, workflow.images);
  const scope = new AssignmentScope(access, workflow.images);
  const revisions = new RevisionsRepository(db);
  const annotationsRepository = new AnnotationsRepository(db);
  const models = { runtime: new ModelRuntime(blobs, config.dataDir), repository: new ModelsRepository(db) };
  return {
    workflow,
    writes,
    features: new ImageFeatureRecorder(new ImageFeaturesRepository(db), blobs),
    locks,
    scope,
    blobClaims: new BlobClaims(new BlobClaimsRepository(db)),
    ingest: new ImageIngest(blobs, { maxImagePixels: config.maxImagePixels, metrics }),
    images,
    revisions,
    annotations: new AnnotationsService(writes, annotationsRepository, access, locks, revisions, scope),
    annotationsRepository,
    classesRepository: new ClassesRepository(db),
    projectsRepository,
    projects: new ProjectsService(projectsRepository, access, orgAccess, blobs),
    models,
    probes,
  };
}

/**
 * Every module, each through the same entry: register<Name>Module(app, deps), returning what it offers others (so the
 * order is that of their needs). `storage` is the project storages' repository and bucket clients (the blob store reads
 * through them too).
 */
async function registerModules(app: FastifyInstance, deps: ModuleDeps<SharedServices>, storage: { repository: StoragesRepository; buckets: StorageBuckets; secrets: SecretBox | null }, loginClock?: LoginClock): Promise<void> {
  const { config, plugins } = deps;
  const auth = registerAuthModule(app, deps, loginClock);
  registerAuthentication(app, auth);
  registerProjectsModule(app, deps);
  registerPlatformModule(app, deps, auth);
  registerClassesModule(app, deps);
  const imagesModule = registerImagesModule(app, deps);
  const videos = await registerVideosModule(app, deps, imagesModule.repository);
  const tracks = registerTracksModule(app, deps);
  registerAnnotationsModule(app, deps, tracks.frameShapes);
  registerSplitsModule(app, deps);
  const versions = await registerVersionsModule(app, deps);
  registerJobsModule(app, deps);
  const exportsModule = registerExportsModule(app, deps);
  const modelsModule = registerModelsModule(app, deps);
  const autoAnnotate = registerAutoAnnotateModule(app, deps);
  registerSuggestionsModule(app, deps, autoAnnotate);
  registerTrackSuggestionsModule(app, deps, autoAnnotate);
  const members = registerMembersModule(app, deps);
  registerInvitationsModule(app, deps, auth, storage.secrets);
  registerOrgsModule(app, deps, members);
  registerAssignmentsModule(app, deps);
  registerNextToLabelModule(app, deps);
  const reviews = registerReviewsModule(app, deps);
  registerQualityControlModule(app, deps, tracks.frameShapes);
  registerLocksModule(app, deps);
  registerRevisionsModule(app, deps);
  registerMaintenanceModule(app, deps);
  const profile = registerProfileModule(app, deps);
  const readiness = registerReadinessModule(app, deps, profile.profiler, profile.samples);
  const quality = registerQualityModule(app, deps, profile.samples);
  const cleaning = registerCleaningModule(app, deps, quality.quality);
  registerCanonicalModule(app, deps);
  const samples = registerSamplesModule(app, deps, exportsModule.repository, videos.frames);
  registerImportsModule(app, deps, samples.samples);
  const training = await registerTrainingModule(app, deps, modelsModule.service, readiness, samples.adapters);
  registerExperimentsModule(app, deps, modelsModule.service);
  registerAdaptersModule(app, samples.adapters, training);
  await registerPipelinesModule(app, deps, pipelinePorts(deps, { quality, cleaning, training, detector: autoAnnotate, reviews, versions: versions.service, exports: exportsModule.service }));
  registerCatalogPlugins(plugins, {
    checks: quality.checkCatalog().map((c) => ({ name: c.id, title: c.title, description: c.description, params: c.params })),
    actions: cleaning.cleaningCatalog().map((a) => ({ name: a.id, title: a.title, description: a.description, params: a.params })),
    adapters: ADAPTERS.map((a) => ({ name: a.name, title: a.title, description: `Trains ${a.tasks.join(', ')} (${a.modality})`, params: a.params })),
  });
  registerPluginsModule(app, plugins);
  await loadPluginDirectory(plugins, config.pluginsDir, app.log);
  registerStoragesModule(app, deps, { ...storage, images: imagesModule.service, exports: exportsModule.service });
  await registerPagesModule(app, deps);
}

/** What the pipeline steps call: the services that serve the same routes (for `quality`, `cleaning` and `train`, through an adapter). */
function pipelinePorts(
  deps: ModuleDeps<SharedServices>,
  { quality, cleaning, training, ...services }: Pick<PipelinePorts, 'detector' | 'reviews' | 'versions' | 'exports'> & { quality: QualityModule; cleaning: CleaningModule; training: TrainingService },
): PipelinePorts {
  return {
    ...services,
    models: deps.services.models.repository,
    webhook: new WebhookSender(deps.config.webhookAllowlist),
    quality: {
      async run(caller, projectId, params) {
        const report = await quality.quality.report(caller, projectId, { checks: params.checks, params: params.config as QualityBody['params'] }, { imageIds: params.image_ids });
        return { score: report.score, ...(params.image_ids ? { images: params.image_ids.length } : {}), checks: report.checks.map((c) => ({ id: c.id, severity: c.severity, count: c.count, message: c.message })) };
      },
    },
    cleaning: {
      // What the step applies is exactly what its own preview listed; the cleaning run it records can be reverted whole.
      async apply(caller, projectId, params) {
        const actions = [{ id: params.action, params: params.params }];
        const preview = await cleaning.cleaning.preview(caller, projectId, { actions });
        const applied = await cleaning.cleaning.apply(caller, projectId, { actions, preview_token: preview.preview_token });
        return { ...applied, ids: [applied.cleaning_run_id] };
      },
    },
    training: {
      async start(caller, projectId, params) {
        if (params.version_id === null) throw ValidationError.at(['params', 'version_id'], 'no version to train on: name one, or create one in an earlier step');
        const request = Value.Default(TrainRequest, { ...params.params, adapter: params.adapter, version_id: params.version_id }) as TrainRequest;
        const problem = [...Value.Errors(TrainRequest, request)][0];
        if (problem) throw ValidationError.at(['params', ...problem.instancePath.split('/').filter(Boolean)], problem.message);
        return { ...(await training.startTraining(caller, projectId, request)) };
      },
    },
  };
}

const WORKER_ROUTES = new Set(['/api/health', '/api/ready', '/metrics']);

async function workerRoutesOnly(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!WORKER_ROUTES.has(request.url.split('?')[0])) await reply.status(404).send({ detail: 'This is a worker process (VERSA_ROLE=worker): it serves only /api/health, /api/ready and /metrics' });
}
