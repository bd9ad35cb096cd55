/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { after, before } from 'node:test';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { chromium, request, type APIRequestContext, type BrowserContext, type Page } from 'playwright-core';
import { buildApp, type Versa } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openTestDatabase } from '../helpers/test-app.js';

/** What the editor page exposes to browser tests and the benchmark (web/src/pages/annotate-page.tsx). */
interface EditorHandle {
  controller: {
    canvas: HTMLCanvasElement;
    scale: number;
    tx: number;
    ty: number;
    store: { items: Map<number, unknown> } | null;
    lastPaintMs: number;
    /** Video frames (issue 26): the shapes on the frame, and what the last draw stroked solid and dashed (and the suggestions drawn apart). */
    shapes: Map<number, { ann: { track_id?: number; interpolated?: boolean; geometry: unknown } }>;
    drawn: { solid: number; dashed: number; suggested: number };
    /** Shapes hidden and locked (the objects list, H and L). */
    hidden: Set<number>;
    locked: Set<number>;
    paint(): void;
    /** The view: zoom by `factor` about a point of the canvas, pan by pixels (the minimap shows once zoomed in). */
    zoomAt(sx: number, sy: number, factor: number): void;
    panBy(dx: number, dy: number): void;
  };
  imageId(): number | null;
  lastSwitchMs(): number;
  firstPaintAt(): number;
}

declare global {
  interface Window {
    __versaEditor?: EditorHandle;
  }
}

export const CHROMIUM = '/usr/bin/chromium';
export const SKIP_REASON = existsSync(CHROMIUM) ? null : 'chromium not installed: apt-get install -y chromium';
export const SCREENSHOTS = 'test-output/screenshots';
/** The password of the accounts tests register. */
export const PASSWORD = 'correct horse battery';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** Newest modification time of the files under `dir` (0 when it does not exist). */
function newestChange(dir: string): number {
  let newest = 0;
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    }
  } catch {
    return 0;
  }
  return newest;
}

/**
 * Builds web/dist, through the same script as `npm run build:web`, when it is missing or older than a file of the
 * front end's source (web/src, and the typed client in clients/typescript): a stale build would test yesterday's pages.
 */
export function ensureWebBuilt(): void {
  let built = 0;
  try {
    built = statSync('web/dist/index.html').mtimeMs;
  } catch {
    built = 0;
  }
  // The pages' source, and the typed API client they are built with.
  if (built > 0 && built >= Math.max(newestChange('web/src'), newestChange('clients/typescript'), statSync('web/index.html').mtimeMs)) return;
  const res = spawnSync(process.execPath, ['scripts/build-web.mjs'], { stdio: 'inherit' });
  if (res.status !== 0) throw new Error('npm run build:web failed');
}

export interface LiveServer {
  readonly versa: Versa;
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** The real app on a free port, with a fresh DATA_DIR and database; `env` adds settings (SECRETS_KEY, say). */
export async function startServer(env: Record<string, string> = {}): Promise<LiveServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'versa-browser-'));
  const config = loadConfig({ ...env, DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL ?? '', LOG_LEVEL: 'silent' });
  const { database, drop } = await openTestDatabase(dataDir);
  const versa = await buildApp(config, { database, logger: false });
  await versa.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = versa.app.server.address() as AddressInfo;
  return {
    versa,
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      await versa.app.close();
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Browser {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/** Debian's Chromium with a throwaway profile; nothing is ever downloaded. */
export async function launchBrowser(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'versa-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * What every browser test starts with: the web build, the real app on a free port and Chromium on a page whose
 * script errors are pushed to `errors`. `close` (for `after`) closes what was opened.
 */
export async function openLivePage(errors: string[], env: Record<string, string> = {}): Promise<{ server: LiveServer; browser: Browser; page: Page }> {
  ensureWebBuilt();
  const server = await startServer(env);
  const browser = await launchBrowser().catch(async (err: unknown) => {
    await server.close();
    throw err;
  });
  browser.page.on('pageerror', (e) => errors.push(e.message));
  return { server, browser, page: browser.page };
}

/** Closes what openLivePage opened (either may be missing when `before` failed). */
export async function closeLivePage(opened: { browser?: Browser; server?: LiveServer }): Promise<void> {
  await opened.browser?.close();
  await opened.server?.close();
}

/** What a suite's live page holds: the server, the browser, its page and the page's uncaught errors. */
export interface LivePage {
  readonly server: LiveServer;
  readonly browser: Browser;
  readonly page: Page;
  readonly errors: string[];
}

/** Opens a live server and Chromium page before the suite's tests and closes both after them; read its fields inside tests. */
export function livePageSuite(env: Record<string, string> = {}): LivePage {
  const live = { errors: [] as string[] } as { -readonly [K in keyof LivePage]?: LivePage[K] } & { errors: string[] };
  before(async () => {
    Object.assign(live, await openLivePage(live.errors, env));
  });
  after(() => closeLivePage(live));
  return live as LivePage;
}

/**
 * A JSON API call through the page's own session (its cookies): asserts the status (201 for POST, 200 for GET unless
 * told) and answers the body. `base` is read at each call, so it can name a server started later.
 */
export function apiCaller(page: () => Page, base: () => string) {
  return async <T>(method: 'get' | 'post', url: string, data?: unknown, status = method === 'post' ? 201 : 200): Promise<T> => {
    const res = method === 'get' ? await page().request.get(base() + url) : await page().request.post(base() + url, { data: (data ?? {}) as object });
    assert.equal(res.status(), status, `${url}: ${await res.text()}`);
    return (await res.json()) as T;
  };
}

/** Signs the page in as `email` (an account made with PASSWORD), signing out whoever was in. */
export async function signPageIn(page: Page, base: string, email: string): Promise<void> {
  await page.context().clearCookies();
  assert.equal((await page.request.post(`${base}/api/auth/login`, { data: { email, password: PASSWORD } })).status(), 200);
}

/** Registers the instance admin (the first account, kept out of the way) and `email`, and signs the page in as `email`. */
export async function signInNewUser(call: ReturnType<typeof apiCaller>, email: string): Promise<void> {
  await call('post', '/api/auth/register', { email: 'admin@example.com', password: 'correct horse battery' });
  await call('post', '/api/auth/register', { email, password: 'correct horse battery' });
  await call('post', '/api/auth/login', { email, password: 'correct horse battery' }, 200);
}

/**
 * A registered and signed-in account with its own API session (not the page's): `call` asserts the status (201 for
 * POST, 200 otherwise unless told) and answers the body (null when empty). The session joins `sessions`, which the
 * suite disposes of.
 */
export async function apiAccount(baseUrl: string, sessions: APIRequestContext[], email: string, displayName?: string) {
  const ctx = await request.newContext({ baseURL: baseUrl });
  sessions.push(ctx);
  const reg = await ctx.post('/api/auth/register', { data: { email, password: PASSWORD, ...(displayName ? { display_name: displayName } : {}) } });
  assert.equal(reg.status(), 201, await reg.text());
  assert.equal((await ctx.post('/api/auth/login', { data: { email, password: PASSWORD } })).status(), 200);
  const call = async <T = unknown>(method: 'get' | 'post' | 'put', url: string, data?: unknown, status = method === 'post' ? 201 : 200): Promise<T> => {
    const res = await ctx[method](url, data === undefined ? {} : { data: data as object });
    const text = await res.text();
    assert.equal(res.status(), status, `${method} ${url}: ${text}`);
    return (text ? JSON.parse(text) : null) as T;
  };
  return { id: ((await reg.json()) as { id: number }).id, email, displayName: displayName ?? email, ctx, call };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** Polls until `check` returns a value that is not undefined/false, or fails after `ms`. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
