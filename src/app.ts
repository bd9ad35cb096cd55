import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import { AccessRepository } from './access/access.repository.js';
import { OrgAccess } from './access/org-access.js';
import { ProjectAccess } from './access/project-access.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { registerAuthentication } from './http/authenticate.js';
import { registerErrorHandler } from './http/error-handler.js';
import { registerMultipartBodies } from './http/multipart-request.js';
import { registerOpenApi } from './http/openapi.js';
import { BullmqQueue } from './jobs/bullmq-queue.js';
import { InProcessQueue } from './jobs/in-process-queue.js';
import type { JobQueue } from './jobs/job-queue.js';
import { JobsRepository } from './jobs/jobs.repository.js';
import { connectRedis, pingRedis } from './jobs/redis.js';
import { registerAnnotationsModule } from './modules/annotations/index.js';
import { registerAutoAnnotateModule } from './modules/auto-annotate/index.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { AuthService } from './modules/auth/auth.service.js';
import { registerClassesModule } from './modules/classes/index.js';
import { registerExportsModule } from './modules/exports/index.js';
import { registerImportsModule } from './modules/imports/index.js';
import { registerImagesModule } from './modules/images/index.js';
import { registerJobsModule } from './modules/jobs/index.js';
import { registerAssignmentsModule } from './modules/assignments/index.js';
import { registerLocksModule } from './modules/locks/index.js';
import { registerMembersModule } from './modules/members/index.js';
import { registerModelsModule } from './modules/models/index.js';
import { registerTrainingModule } from './modules/training/index.js';
import { registerOrgsModule } from './modules/orgs/index.js';
import { registerReviewsModule } from './modules/reviews/index.js';
import { registerRevisionsModule } from './modules/revisions/index.js';
import type { ModuleDeps } from './modules/module-deps.js';
import { registerPagesModule } from './modules/pages/index.js';
import { registerSplitsModule } from './modules/splits/index.js';
import { registerVersionsModule } from './modules/versions/index.js';
import { platformRoutes } from './modules/platform/platform.routes.js';
import { PlatformService, type ReadinessProbe } from './modules/platform/platform.service.js';
import { ProjectsRepository } from './modules/projects/projects.repository.js';
import { projectsRoutes } from './modules/projects/projects.routes.js';
import { ProjectsService } from './modules/projects/projects.service.js';
import { configureSharp } from './imaging/sharp-config.js';
import { LocalBlobStore } from './storage/local-blob-store.js';
import { VERSION } from './version.js';

/** A route as registered: the authorization matrix test walks every one of them. */
export interface RouteEntry {
  readonly method: string;
  readonly url: string;
}

export interface Versa {
  readonly app: FastifyInstance;
  readonly routes: readonly RouteEntry[];
  readonly database: DatabaseHandle;
  readonly deps: ModuleDeps;
}

export interface BuildOptions {
  /** An already-open database (tests open one per file); otherwise one is opened from the config. */
  database?: DatabaseHandle;
  logger?: boolean;
}

/** The composition root: wires database, storage, queue, services and routes. No globals. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<Versa> {
  configureSharp();
  const database = options.database ?? (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl }));
  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel },
    bodyLimit: 16 * 1024 * 1024,
    trustProxy: false,
    ajv: { customOptions: { allErrors: true } },
  });
  app.addHook('onClose', () => database.close());
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url });
  });

  const db = database.db;
  const blobs = new LocalBlobStore(join(config.dataDir, 'blobs'));
  const jobs = new JobsRepository(db);
  await jobs.failInterrupted();
  const queue: JobQueue = config.redisUrl
    ? new BullmqQueue(jobs, app.log, { redisUrl: config.redisUrl, prefix: config.queuePrefix, work: config.role !== 'api' })
    : new InProcessQueue(jobs, app.log, 1);
  app.addHook('onClose', () => queue.close());

  const projectsRepository = new ProjectsRepository(db);
  const accessRepository = new AccessRepository(db);
  const access = new ProjectAccess(projectsRepository, accessRepository);
  const orgAccess = new OrgAccess(accessRepository);
  const deps: ModuleDeps = { config, db, blobs, queue, access, orgAccess };

  const auth = new AuthService(db, config.authAttemptsPerMinute);
  const projects = new ProjectsService(projectsRepository, access, orgAccess, blobs);
  const probes: ReadinessProbe[] = [{ name: 'database', check: () => database.ping() }];
  if (config.redisUrl) {
    const redis = connectRedis(config.redisUrl);
    redis.on('error', (err) => app.log.warn({ err }, 'redis connection error'));
    app.addHook('onClose', () => void redis.disconnect());
    probes.push({ name: 'redis', check: () => pingRedis(redis) });
  }
  const platform = new PlatformService(VERSION, projects, probes);

  registerErrorHandler(app);
  await app.register(cookie);
  registerMultipartBodies(app);
  registerAuthentication(app, auth);
  await registerOpenApi(app, VERSION);

  authRoutes(app, auth);
  projectsRoutes(app, projects);
  platformRoutes(app, platform);
  registerClassesModule(app, deps);
  registerImagesModule(app, deps);
  registerAnnotationsModule(app, deps);
  registerSplitsModule(app, deps);
  await registerVersionsModule(app, deps);
  registerJobsModule(app, deps);
  registerExportsModule(app, deps);
  registerImportsModule(app, deps);
  const models = registerModelsModule(app, deps);
  registerAutoAnnotateModule(app, deps, models);
  await registerTrainingModule(app, deps, models);
  registerMembersModule(app, deps);
  registerOrgsModule(app, deps);
  registerAssignmentsModule(app, deps);
  registerReviewsModule(app, deps);
  registerLocksModule(app, deps);
  registerRevisionsModule(app, deps);
  await registerPagesModule(app, deps);

  return { app, routes, database, deps };
}
