/**
 * A URL names its folder (issue 32): a newcomer finds a route's code from its URL. The first noun after `/api/` (after
 * `/api/projects/{id}/` for a project's resources) names the folder under src/modules/ whose file registers the
 * route: `/api/projects/{id}/versions` → versions/, `/api/experiments/{id}` → experiments/. A sub-resource of another
 * record may live in the folder its own noun names (`/api/images/{id}/annotations` → annotations/). Outside `/api/`
 * are the web pages (pages/) and the API's documentation (src/http/openapi.ts).
 *
 * The file of a route is the one that registered it: the first frame in src/ on the stack when Fastify announces the
 * route to its onRoute hooks (synchronously, inside `app.get(…)`). The test hooks every Fastify instance made while
 * it builds the app, through Fastify's `fastify.initialization` diagnostics channel.
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

interface PlacedRoute {
  readonly method: string;
  readonly url: string;
  /** The registering file, relative to the repository root; null when no file of src/ was on the stack. */
  readonly file: string | null;
}

/** URL nouns spelled otherwise than their folder (besides a plural folder's singular: `import` → imports/). */
const FOLDER_OF_NOUN: Record<string, string> = {
  train: 'training',
  'pipeline-runs': 'pipelines',
  'cleaning-runs': 'cleaning',
};

/**
 * Routes that live elsewhere than their URL's noun says, with the folder they live in. The test fails when one of
 * these is gone or sits where the rule puts it, so the list only shrinks.
 */
const EXCEPTIONS: Record<string, string> = {
  // The platform's probes and figures: one-word URLs fixed by the spec.
  '/api/health': 'platform',
  '/api/ready': 'platform',
  '/api/stats': 'platform',
  // Who may do what in a project: the members' roles.
  '/api/identity/roles': 'members',
  '/api/projects/:id/my-access': 'members',
  // The device models run on.
  '/api/system/device': 'models',
  // Importing an archive creates the project: the import's work.
  '/api/projects/import': 'imports',
  '/api/projects/import/folder': 'imports',
  // Reverting an annotation replays its revisions.
  '/api/annotations/:id/revert': 'revisions',
  // Predictions are annotations waiting to be accepted.
  '/api/images/:image_id/predictions/accept-all': 'annotations',
  '/api/images/:image_id/predictions/reject-all': 'annotations',
  // The URL is the spec's, but what it serves is the versions' image recipe (preprocessing and augmentation
  // defaults), not a data pipeline: it stays with versions, away from pipelines/.
  '/api/pipeline/defaults': 'versions',
  // Prometheus metrics, where scrapers look for them (issue 27): the platform's figures, outside /api.
  '/metrics': 'platform',
};

/** The API's documentation: Swagger UI's own routes and the OpenAPI document, set up in src/http/openapi.ts. */
const DOCS = /^\/(docs|redoc|openapi\.json)(\/|$)/;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The folders a URL's nouns name: its first noun's, and a sub-resource's (the noun right after the first id). */
function foldersNamedBy(url: string): string[] {
  const segments = url.split('/').filter(Boolean);
  if (segments[0] !== 'api') return ['pages'];
  let rest = segments.slice(1);
  if (rest[0] === 'projects' && rest[1]?.startsWith(':') && rest.length > 2) rest = rest.slice(2);
  const nouns = [rest[0]];
  if (rest[1]?.startsWith(':') && rest[2] !== undefined && !rest[2].startsWith(':')) nouns.push(rest[2]);
  return nouns.flatMap((noun) => [noun, `${noun}s`, ...(FOLDER_OF_NOUN[noun] ? [FOLDER_OF_NOUN[noun]] : [])]);
}

function folderOf(file: string | null): string | null {
  return file === null ? null : (/^src\/modules\/([^/]+)\//.exec(file)?.[1] ?? null);
}

/** The routes whose file is not where their URL (or their exception) says, as "METHOD URL → file". */
function misplaced(routes: readonly PlacedRoute[]): string[] {
  return routes
    .filter((r) => !DOCS.test(r.url))
    .filter((r) => {
      const folder = folderOf(r.file);
      const expected = EXCEPTIONS[r.url];
      return folder === null || (expected !== undefined ? folder !== expected : !foldersNamedBy(r.url).includes(folder));
    })
    .map((r) => `${r.method} ${r.url} → ${r.file ?? 'no file of src/'}`);
}

function registeringFile(): string | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 100;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  for (const line of stack.split('\n')) {
    const match = /(?:file:\/\/)?(\/[^():]+\.[cm]?[jt]s):\d+:\d+\)?$/.exec(line.trim());
    if (!match) continue;
    const file = relative(ROOT, match[1]);
    if (file.startsWith('src/')) return file;
  }
  return null;
}

async function registeredRoutes(): Promise<PlacedRoute[]> {
  const routes: PlacedRoute[] = [];
  const onInit = (message: unknown) => {
    (message as { fastify: FastifyInstance }).fastify.addHook('onRoute', (route: RouteOptions) => {
      const file = registeringFile();
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url, file });
    });
  };
  const dataDir = await mkdtemp(join(tmpdir(), 'versa-route-rooms-'));
  subscribe('fastify.initialization', onInit);
  try {
    const { app } = await buildApp(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'silent' }), { logger: false });
    await app.ready();
    await app.close();
  } finally {
    unsubscribe('fastify.initialization', onInit);
    await rm(dataDir, { recursive: true, force: true });
  }
  return routes;
}

const routes = registeredRoutes();

test('every route is registered from the folder its URL names', async () => {
  const all = await routes;
  assert.ok(all.filter((r) => r.file !== null).length > 150, `the hook saw ${all.length} routes`);
  assert.deepEqual(misplaced(all), []);
});

test('every exception is a registered route that the rule alone would misplace', async () => {
  const all = await routes;
  for (const [url, folder] of Object.entries(EXCEPTIONS)) {
    const placed = all.filter((r) => r.url === url);
    assert.ok(placed.length > 0, `${url} is not a route any more: drop its exception`);
    assert.ok(!foldersNamedBy(url).includes(folder), `${url} sits in ${folder}/ as its URL says: drop its exception`);
  }
});

test('the rule reads the first noun, a project resource and a sub-resource', () => {
  assert.ok(foldersNamedBy('/api/experiments/:id').includes('experiments'));
  assert.ok(foldersNamedBy('/api/projects/:id/adapters/train').includes('adapters'));
  assert.ok(!foldersNamedBy('/api/projects/:id/adapters/train').includes('projects'));
  assert.ok(foldersNamedBy('/api/projects/:id').includes('projects'));
  assert.ok(foldersNamedBy('/api/projects/:id/import/tabular').includes('imports'));
  assert.ok(foldersNamedBy('/api/images/:image_id/lock').includes('locks'));
  assert.ok(foldersNamedBy('/api/projects/:id/train/status').includes('training'));
  assert.ok(!foldersNamedBy('/api/pipeline/defaults').includes('versions'));
});

test('a route registered from another folder is reported', () => {
  const file = 'src/modules/training/training.routes.ts';
  assert.deepEqual(misplaced([
    { method: 'GET', url: '/api/projects/:id/train/status', file },
    { method: 'GET', url: '/api/experiments/:id', file },
    { method: 'GET', url: '/api/health', file },
    { method: 'GET', url: '/projects/:project_id', file: 'src/modules/pages/pages.routes.ts' },
    { method: 'GET', url: '/docs/json', file: null },
  ]), [`GET /api/experiments/:id → ${file}`, `GET /api/health → ${file}`]);
});
