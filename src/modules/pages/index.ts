import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { pagesRoutes } from './pages.routes.js';
import { WebDist } from './web-dist.adapter.js';

/** web/dist at the repository root, from src/modules/pages (tsx) and from dist/modules/pages (built) alike. */
export const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

export interface PagesOptions {
  /** Where the built front end lives; tests point it elsewhere. */
  distDir?: string;
}

/** Serves the built single-page app: its page routes and its assets under /static/. */
export async function registerPagesModule(app: FastifyInstance, _deps: ModuleDeps, options: PagesOptions = {}): Promise<void> {
  pagesRoutes(app, new WebDist(options.distDir ?? DEFAULT_WEB_DIST));
}
