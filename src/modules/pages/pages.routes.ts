import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError, NotFoundError } from '../../http/errors.js';
import { PAGE_SECURITY_HEADERS } from './security-headers.logic.js';
import type { WebDist } from './web-dist.adapter.js';

/** The page routes the spec names; the SPA decides what to draw from the URL. */
export const PAGE_ROUTES = [
  '/',
  '/login',
  '/projects/new',
  '/projects/:project_id',
  '/projects/:project_id/annotate',
  '/projects/:project_id/upload',
  '/projects/:project_id/review',
  '/projects/:project_id/assign',
  '/invite/:token',
  '/projects/:project_id/samples',
  '/projects/:project_id/experiments/:experiment_id',
  '/projects/:project_id/quality',
  '/projects/:project_id/quality/disagreements',
  '/queue',
] as const;

class FrontEndNotBuiltError extends HttpError {
  constructor() {
    super(503, 'front_end_not_built', 'The web pages are not built: run npm run build:web');
  }
}

export function pagesRoutes(app: FastifyInstance, dist: WebDist): void {
  const sendIndex = async (reply: FastifyReply) => {
    const html = await dist.indexHtml();
    reply.headers(PAGE_SECURITY_HEADERS);
    if (html === null) throw new FrontEndNotBuiltError();
    return reply.header('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(html);
  };

  for (const url of PAGE_ROUTES) {
    app.get(url, { schema: { hide: true } }, (_request, reply) => sendIndex(reply));
  }

  app.get<{ Params: { '*': string } }>('/static/*', { schema: { hide: true } }, async (request, reply) => {
    const file = await dist.file(request.params['*']);
    reply.headers(PAGE_SECURITY_HEADERS);
    if (!file) throw new NotFoundError('Static file not found');
    return reply
      .header('Content-Length', file.size)
      .header('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .type(file.contentType)
      .send(file.stream);
  });
}
