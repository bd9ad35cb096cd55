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
    assert.equal(doc.paths['/api/projects/{id}/images']!.get!.operationId, 'getProjectsIdImages');
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
