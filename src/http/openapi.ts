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

/** Actions named by a URL's last segment (`POST /api/jobs/{id}/cancel` → `cancelJob`), with the verb they read as. */
const ACTIONS: Record<string, string> = {
  accept: 'accept', reject: 'reject', cancel: 'cancel', decide: 'decide', revert: 'revert', regenerate: 'regenerate',
  submit: 'submit', review: 'review', run: 'run', validate: 'validate', preview: 'preview', prepare: 'prepare',
  train: 'train', export: 'export', upload: 'upload', register: 'register', login: 'login', logout: 'logout',
  'bulk-delete': 'bulkDelete', assign: 'assign', compare: 'compare', prefetch: 'prefetch',
};
/** Actions on several records at once: their object keeps its plural (`bulkDeleteImages`, `compareExperiments`). */
const PLURAL_ACTIONS = new Set(['bulkDelete', 'assign', 'compare', 'prefetch']);

/**
 * Names the rule below reads badly or gives twice (`GET /api/versions/{id}` and the project's `GET …/versions/{id}`
 * would both be `getVersion`), keyed by `METHOD /path` as the document spells it. A route's name never changes once
 * published, so this list only grows.
 */
const OPERATION_IDS: Record<string, string> = {
  'GET /api/auth/me': 'getCurrentUser',
  'DELETE /api/auth/tokens': 'deleteTokenByQuery',
  'GET /api/stats': 'getStats',
  'GET /metrics': 'getMetrics',
  'GET /api/identity/roles': 'listRoles',
  'GET /api/models': 'listAllModels',
  'GET /api/versions/{id}': 'getVersionById',
  'GET /api/pipeline/defaults': 'getPipelineDefaults',
  'GET /api/pipelines/example': 'getPipelineExample',
  'POST /api/pipelines/validate': 'validatePipeline',
  'POST /api/pipelines/validate-yaml': 'validatePipelineYaml',
  'POST /api/pipelines/from-yaml': 'createPipelineFromYaml',
  'POST /api/projects/{id}/images': 'uploadImages',
  'POST /api/projects/{id}/videos': 'uploadVideo',
  'GET /api/images/{image_id}/annotations': 'listAnnotations',
  'POST /api/images/{image_id}/annotations': 'createAnnotation',
  'POST /api/images/{image_id}/predictions/accept-all': 'acceptPredictions',
  'POST /api/images/{image_id}/predictions/reject-all': 'rejectPredictions',
  'GET /api/projects/{id}/splits': 'getSplits',
  'POST /api/projects/{id}/splits': 'assignSplits',
  'POST /api/projects/{id}/samples/splits': 'assignSampleSplits',
  'POST /api/projects/{project_id}/versions/preview': 'previewVersion',
  'GET /api/assignments/mine': 'listMyAssignments',
  'POST /api/projects/{id}/quality': 'runQualityChecks',
  'GET /api/projects/{id}/quality': 'getQualityReport',
  'POST /api/projects/{id}/readiness': 'checkReadiness',
  'POST /api/projects/{id}/cleaning': 'applyCleaning',
  'POST /api/projects/{id}/auto-annotate/yolo': 'autoAnnotateYolo',
  'POST /api/projects/{id}/auto-annotate/sam': 'autoAnnotateSam',
  'POST /api/projects/{id}/auto-annotate/sam/precompute': 'precomputeSamEmbeddings',
  'POST /api/projects/import': 'importProject',
  'POST /api/projects/import/folder': 'importProjectFromFolder',
  'POST /api/projects/{id}/import': 'importIntoProject',
  'POST /api/projects/{id}/import/folder': 'importFolderIntoProject',
  'POST /api/projects/{id}/import/text': 'importTextSamples',
  'POST /api/projects/{id}/import/tabular': 'importTabularSamples',
  'POST /api/projects/{id}/import/jsonl': 'importJsonlSamples',
  'GET /api/projects/{id}/train/status': 'getTrainingStatus',
  'GET /api/train/jobs/{job_id}': 'getTrainingJob',
  'GET /api/exports/{filename}': 'downloadExport',
};

const pascal = (word: string) => word.split(/[-_]/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
/** `classes` → `class`, `images` → `image`; a word that is not a plural (`status`, `progress`) stays. */
const singular = (word: string) => (/(ss|us)$/.test(word) ? word : word.endsWith('sses') || word.endsWith('ches') ? word.slice(0, -2) : word.replace(/s$/, ''));
const isPlural = (word: string) => /[^su]s$/.test(word);

/**
 * An operation's id, the name generated clients give its method: a verb and the records it acts on, read from the
 * method and path — `GET /api/projects/{id}/images` → `listImages`, `GET /api/classes/{class_id}` → `getClass`,
 * `POST /api/projects` → `createProject`, `POST /api/jobs/{id}/cancel` → `cancelJob`. A project's resources are named
 * without the project (`/api/projects/{id}/…` is their home); a record under another (`/api/images/{id}/revisions`)
 * carries its parent's name (`listImageRevisions`). `OPERATION_IDS` names the exceptions; test/http/openapi.test.ts
 * checks the names are unique and pins some.
 */
export function operationIdOf(method: string, url: string): string {
  const path = url.replace(/:(\w+)/g, '{$1}');
  const verb = method.toUpperCase();
  const fixed = OPERATION_IDS[`${verb} ${path}`];
  if (fixed) return fixed;
  let segments = path.replace(/^\/api\//, '/').split('/').filter(Boolean);
  const inProject = segments[0] === 'projects' && segments[1]?.startsWith('{') === true && segments.length > 2;
  if (inProject) segments = segments.slice(2);
  if (segments[0] === 'auth') segments = segments.slice(1);
  const last = segments.at(-1) ?? '';
  const action = verb === 'POST' ? ACTIONS[last] : undefined;
  if (action) segments = segments.slice(0, -1);
  // Each noun as it reads: singular when a parameter or another noun follows it (one record, or a qualifier as in
  // `listModelRuns`), as written at the end.
  const lastNoun = segments.findLastIndex((segment) => !segment.startsWith('{'));
  const nouns = segments.flatMap((segment, i) =>
    segment.startsWith('{') ? [] : [i < lastNoun || segments[i + 1]?.startsWith('{') ? singular(segment) : segment],
  );
  if (action) {
    if (nouns.length === 0 && inProject) nouns.push('project');
    if (nouns.length > 0 && !PLURAL_ACTIONS.has(action)) nouns[nouns.length - 1] = singular(nouns.at(-1)!);
    return action + nouns.map(pascal).join('');
  }
  const endsWithRecord = last.startsWith('{');
  const name = (prefix: string, singularLast: boolean) => {
    const words = [...nouns];
    if (singularLast && words.length > 0) words[words.length - 1] = singular(words.at(-1)!);
    return prefix + words.map(pascal).join('');
  };
  switch (verb) {
    case 'GET':
      return endsWithRecord || !isPlural(last) ? name('get', false) : name('list', false);
    case 'POST':
      return name('create', true);
    case 'PUT':
    case 'PATCH':
      return name('update', false);
    case 'DELETE':
      return name('delete', false);
    default:
      return name(verb.toLowerCase(), false);
  }
}

/** URL nouns whose module is spelled otherwise (see test/structure/route-rooms.test.ts, which holds routes to it). */
const TAG_OF_NOUN: Record<string, string> = {
  train: 'training', import: 'imports', export: 'exports', 'pipeline-runs': 'pipelines', 'cleaning-runs': 'cleaning',
  health: 'platform', ready: 'platform', stats: 'platform', metrics: 'platform', identity: 'members', system: 'models',
  pipeline: 'versions', 'my-access': 'members',
};

/**
 * An operation's tag, which generated clients make one class of (`ProjectsApi`, `ImagesApi`): the module its URL
 * names, the first noun after `/api/` (after `/api/projects/{id}/` for a project's resources).
 */
export function tagOf(url: string): string {
  let segments = url.split('/').filter(Boolean);
  if (segments[0] === 'api') segments = segments.slice(1);
  if (segments[0] === 'projects' && /^[:{]/.test(segments[1] ?? '') && segments.length > 2) segments = segments.slice(2);
  const noun = segments[0] ?? 'platform';
  return TAG_OF_NOUN[noun] ?? noun;
}

interface MediaType {
  schema?: Record<string, unknown>;
}
interface Operation {
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
  tags?: string[];
}
interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
  tags?: { name: string }[];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The API's error bodies (see api-contract.md, "Errors"), declared once and referred to by every operation. */
const ERROR_SCHEMAS = {
  HTTPError: {
    type: 'object',
    description: 'An error: `detail` says what went wrong (some errors add members, such as `readiness` on a refused training).',
    properties: { detail: { type: 'string' } },
    required: ['detail'],
    additionalProperties: true,
  },
  ValidationIssue: {
    type: 'object',
    description: 'One value that failed validation: where (`["body", "project_type"]`), what (`msg`) and which rule (`type`).',
    properties: {
      loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
      msg: { type: 'string' },
      type: { type: 'string' },
    },
    required: ['loc', 'msg', 'type'],
  },
  HTTPValidationError: {
    type: 'object',
    description: 'The request failed validation: one issue per value (a value outside an enum names the values allowed).',
    properties: { detail: { type: 'array', items: ref('ValidationIssue') } },
    required: ['detail'],
  },
  ErrorResponse: {
    type: 'object',
    description: 'Any error: `detail` is a sentence, or (422) the list of validation issues.',
    properties: { detail: { anyOf: [{ type: 'string' }, { type: 'array', items: ref('ValidationIssue') }] } },
    required: ['detail'],
    additionalProperties: true,
  },
} as const;

/** True for a response schema that is the plain `{detail}` shape, with nothing more to say than the shared one. */
function plainErrorKind(schema: Record<string, unknown> | undefined): keyof typeof ERROR_SCHEMAS | null {
  const properties = schema?.properties as Record<string, { type?: string; anyOf?: unknown[] }> | undefined;
  if (!properties || Object.keys(properties).join() !== 'detail') return null;
  if (properties.detail!.type === 'string') return 'HTTPError';
  if (properties.detail!.type === 'array') return 'HTTPValidationError';
  if (properties.detail!.anyOf) return 'ErrorResponse';
  return null;
}

/**
 * Declares the error bodies on every operation, here rather than route by route: each declared 4xx with the plain
 * shape refers to the shared schema, an operation that takes input answers 422 with the validation list, and every
 * operation has a `4XX` entry (`detail` a string or that list) for the rest (a bad token, a rate limit, a body too
 * large). Also lists the tags the operations use, so generators and ReDoc group them in one order.
 */
export function declareErrors(document: OpenApiDocument): OpenApiDocument {
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...ERROR_SCHEMAS } };
  const tags = new Set<string>();
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      for (const tag of operation.tags ?? []) tags.add(tag);
      const responses = (operation.responses ??= {});
      for (const [status, response] of Object.entries(responses)) {
        if (!/^4/.test(status)) continue;
        const json = response.content?.['application/json'];
        const kind = plainErrorKind(json?.schema);
        if (kind) json!.schema = ref(status === '422' && kind === 'HTTPError' ? 'HTTPValidationError' : kind);
        else if (!response.content) response.content = { 'application/json': { schema: ref('ErrorResponse') } };
      }
      const takesInput = (operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined;
      if (takesInput && !responses['422']) {
        responses['422'] = { description: 'Validation error', content: { 'application/json': { schema: ref('HTTPValidationError') } } };
      }
      responses['4XX'] ??= { description: 'Any other client error', content: { 'application/json': { schema: ref('ErrorResponse') } } };
    }
  }
  document.tags = [...tags].sort().map((name) => ({ name }));
  return document;
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
      transformed.tags = [tagOf(url)];
      return { schema: transformed as never, url };
    },
    transformObject: (documentObject) => declareErrors((documentObject as unknown as { openapiObject: OpenApiDocument }).openapiObject) as never,
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
