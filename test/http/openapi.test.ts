import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('the OpenAPI document', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  it('validates as OpenAPI 3 with a maintained validator (@seriousme/openapi-schema-validator)', async () => {
    const response = await t.client().get('/openapi.json');
    assert.equal(response.status, 200);
    const result = await new Validator().validate(response.body);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 4000));
  });

  it('gives every operation an operationId, unique across the document', async () => {
    const doc = (await t.client().get('/openapi.json')).body as { paths: Record<string, Record<string, { operationId?: string }>> };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ at: `${method} ${path}`, id: op.operationId })));
    assert.ok(operations.length > 100);
    assert.deepEqual(operations.filter((o) => !o.id).map((o) => o.at), []);
    assert.equal(new Set(operations.map((o) => o.id)).size, operations.length, 'no two operations share an id');
    // Names read as a verb and the records (what generated clients call their methods), and are pinned: a rename
    // breaks every client built on the old name.
    const idOf = (method: string, path: string) => doc.paths[path]![method]!.operationId;
    assert.equal(idOf('get', '/api/projects/{id}/images'), 'listImages');
    assert.equal(idOf('post', '/api/projects'), 'createProject');
    assert.equal(idOf('get', '/api/projects/{id}'), 'getProject');
    assert.equal(idOf('patch', '/api/projects/{id}'), 'updateProject');
    assert.equal(idOf('delete', '/api/classes/{class_id}'), 'deleteClass');
    assert.equal(idOf('get', '/api/projects/{id}/classes'), 'listClasses');
    assert.equal(idOf('post', '/api/images/{image_id}/annotations'), 'createAnnotation');
    assert.equal(idOf('post', '/api/jobs/{id}/cancel'), 'cancelJob');
    assert.equal(idOf('get', '/api/images/{image_id}/revisions'), 'listImageRevisions');
    assert.equal(idOf('get', '/api/exports/{filename}'), 'downloadExport');
    assert.equal(idOf('post', '/api/auth/login'), 'login');
    for (const o of operations) assert.match(o.id!, /^[a-z][A-Za-z0-9]*$/, `${o.at}: ${o.id}`);
  });

  it('tags every operation with the one module its URL names, and lists the tags', async () => {
    const doc = (await t.client().get('/openapi.json')).body as { tags: { name: string }[]; paths: Record<string, Record<string, { tags?: string[] }>> };
    const tagOf = (method: string, path: string) => doc.paths[path]![method]!.tags;
    for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) assert.equal(op.tags?.length, 1, `${method} ${path}`);
    assert.deepEqual(tagOf('get', '/api/projects/{id}/classes'), ['classes']);
    assert.deepEqual(tagOf('post', '/api/projects/{id}/train'), ['training']);
    assert.deepEqual(tagOf('get', '/api/pipeline-runs/{id}'), ['pipelines']);
    assert.deepEqual(tagOf('get', '/api/health'), ['platform']);
    const used = new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? [])));
    assert.deepEqual(doc.tags.map((tag) => tag.name), [...used].sort());
  });

  it('declares every file download as bytes in its media types, not JSON', async () => {
    type Content = Record<string, { schema?: { type?: string; format?: string } }>;
    const doc = (await t.client().get('/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, { content?: Content }> }>> };
    const downloads: Record<string, string> = {
      '/api/exports/{filename}': 'application/zip',
      '/api/projects/{id}/images/file/{filename}': 'image/jpeg',
      '/api/images/{image_id}/thumbnail': 'image/webp',
      '/api/projects/{project_id}/versions/{version_id}/images/{image_id}/file': 'image/jpeg',
      '/api/samples/{sample_id}/file': 'application/octet-stream',
    };
    // Any route that serves a file (a GET whose path names one) is in the list above; a POST …/exports writes one.
    const fileRoutes = Object.keys(doc.paths).filter((path) => doc.paths[path]!.get && /\/(file|thumbnail|exports)(\/|$)/.test(path));
    assert.deepEqual(fileRoutes.filter((path) => !downloads[path]), []);
    for (const [path, mediaType] of Object.entries(downloads)) {
      const content = doc.paths[path]!.get!.responses['200']!.content!;
      assert.ok(content[mediaType], `${path} declares ${mediaType}: ${Object.keys(content)}`);
      for (const [type, media] of Object.entries(content)) assert.deepEqual(media.schema, { type: 'string', format: 'binary' }, `${path} ${type}`);
    }
    assert.deepEqual(Object.keys(doc.paths['/api/pipelines/{id}/yaml']!.get!.responses['200']!.content!), ['application/yaml']);
  });

  it('declares the error bodies on every operation: each 4xx has a `detail` shape, input-taking ones a 422 list', async () => {
    type Response = { content?: Record<string, { schema?: Record<string, any> }> };
    const doc = (await t.client().get('/openapi.json')).body as {
      components: { schemas: Record<string, any> };
      paths: Record<string, Record<string, { parameters?: unknown[]; requestBody?: unknown; responses: Record<string, Response> }>>;
    };
    const schemas = doc.components.schemas;
    assert.deepEqual(schemas.HTTPError.properties.detail, { type: 'string' });
    assert.equal(schemas.HTTPValidationError.properties.detail.items.$ref, '#/components/schemas/ValidationIssue');
    assert.deepEqual(schemas.ValidationIssue.required, ['loc', 'msg', 'type']);
    const resolve = (schema: Record<string, any>) => (schema.$ref ? schemas[schema.$ref.split('/').at(-1)] : schema);
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const at = `${method} ${path}`;
        if (!op.responses['4XX']) missing.push(`${at}: no 4XX`);
        if ((op.parameters?.length || op.requestBody) && !op.responses['422']) missing.push(`${at}: no 422`);
        for (const [status, response] of Object.entries(op.responses)) {
          if (!status.startsWith('4')) continue;
          const schema = response.content?.['application/json']?.schema;
          if (!schema || !resolve(schema).properties?.detail) missing.push(`${at} ${status}: no detail`);
        }
      }
    }
    assert.deepEqual(missing, []);
    assert.equal(doc.paths['/api/projects']!.post!.responses['422']!.content!['application/json']!.schema!.$ref, '#/components/schemas/HTTPValidationError');
  });

  it('a value outside an enum is refused with the allowed values named (422)', async () => {
    const alice = await t.user();
    const bad = await alice.post('/api/projects', { name: 'p', project_type: 'detection' });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    assert.deepEqual(bad.body.detail, [{
      loc: ['body', 'project_type'],
      msg: 'must be one of object_detection, instance_segmentation, classification, semantic_segmentation, keypoint_detection, oriented_detection',
      type: 'enum',
    }]);
    // A union of literals (SAM's point labels are 0 or 1) names its values too, once per value.
    const project = await alice.post('/api/projects', { name: 'q', project_type: 'instance_segmentation' });
    const sam = await alice.post(`/api/projects/${project.body.id}/auto-annotate/sam`, { image_id: 1, points: [[1, 2]], labels: [7], preview: true });
    assert.equal(sam.status, 422, JSON.stringify(sam.body));
    assert.deepEqual(sam.body.detail, [{ loc: ['body', 'labels', 0], msg: 'must be one of 0, 1', type: 'enum' }]);
    // In a query string as well.
    const listed = await alice.get(`/api/projects/${project.body.id}/images?split=training`);
    assert.equal(listed.status, 422, JSON.stringify(listed.body));
    assert.match(listed.body.detail[0].msg, /must be one of .*train.*valid.*test/, JSON.stringify(listed.body));
  });

  it('the validator is not a rubber stamp: a JSON-Schema tuple (the SAM points bug) is refused', async () => {
    const doc = structuredClone((await t.client().get('/openapi.json')).body);
    const sam = doc.paths['/api/projects/{id}/auto-annotate/sam'].post.requestBody.content['application/json'].schema;
    sam.properties.points.items = { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false };
    assert.equal((await new Validator().validate(doc)).valid, false);
  });

  it('SAM points are arrays of exactly two numbers, checked at the door', async () => {
    const alice = await t.user();
    const project = await alice.post('/api/projects', { name: 'p', project_type: 'instance_segmentation' });
    const bad = await alice.post(`/api/projects/${project.body.id}/auto-annotate/sam`, { image_id: 1, points: [[1, 2, 3]], labels: [1], preview: true });
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    assert.ok(bad.body.detail.some((d: { loc: (string | number)[] }) => d.loc.includes('points')), JSON.stringify(bad.body));
  });
});
