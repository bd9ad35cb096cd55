import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

const require = createRequire(import.meta.url);
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');

const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
/** A plain local stand-in for ReDoc's footer logo. */
const REDOC_LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#32329f"/></svg>';

const REDOC_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Versa API — ReDoc</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/redoc/redoc.standalone.js"></script></body></html>`;

/**
 * ReDoc runs from the local bundle only: the policy lets nothing load from elsewhere (no CDN logo or fonts), allows the
 * inline styles and blob: workers ReDoc needs, and forbids framing the page.
 */
const REDOC_HEADERS = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self' blob:",
    'worker-src blob:',
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/**
 * An operation's id from its method and path (`GET /api/projects/:id/images` → `getProjectsIdImages`), which tells the
 * operation apart as long as no two paths differ only in their separators (test/http/openapi.test.ts checks they are
 * unique). Clients generated from the document name their methods by it.
 */
export function operationIdOf(method: string, url: string): string {
  const words = url.replace(/^\/api\//, '/').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** The OpenAPI document at /openapi.json, Swagger UI at /docs and ReDoc at /redoc, all served from local assets. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Versa API',
        version,
        description: 'Datasets for machine learning: projects, images, annotations, versions, exports, models and teams.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A login token or an API token' },
          cookie: { type: 'apiKey', in: 'cookie', name: 'versa_session' },
        },
      },
      security: [{ bearer: [] }, { cookie: [] }],
    },
    transform: ({ schema, url, route }) => {
      // Public routes need no credentials; say so in the document.
      const transformed = { ...(schema ?? {}) } as Record<string, unknown>;
      if (route.config && (route.config as { public?: boolean }).public) transformed.security = [];
      transformed.operationId ??= operationIdOf([route.method].flat()[0]!, url);
      return { schema: transformed as never, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  const hide = { schema: { hide: true }, config: { public: true } };
  app.get('/openapi.json', hide, async () => app.swagger());
  app.get('/redoc', hide, async (_request, reply) => reply.type('text/html').headers(REDOC_HEADERS).send(REDOC_PAGE));
  // The bundle's footer logo points at a CDN (cdn.redoc.ly), which the page's CSP refuses and which an offline
  // instance cannot reach: it is served from here instead.
  let bundle: string | null = null;
  app.get('/redoc/redoc.standalone.js', hide, async (_request, reply) => {
    bundle ??= (await readFile(REDOC_BUNDLE, 'utf8')).replaceAll(REDOC_CDN_LOGO, '/redoc/logo-mini.svg');
    return reply.type('application/javascript').header('Cache-Control', 'public, max-age=86400').send(bundle);
  });
  app.get('/redoc/logo-mini.svg', hide, async (_request, reply) =>
    reply.type('image/svg+xml').header('Cache-Control', 'public, max-age=86400').send(REDOC_LOGO),
  );
}
