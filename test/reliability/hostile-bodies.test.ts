/**
 * Issue 24, item 5: a refused request is a 4xx with `detail`, never a 5xx. Every POST, PATCH and PUT route of the
 * app (the list comes from the app itself, the body schemas from its OpenAPI document, so a new route is covered
 * without a row here) gets hostile bodies: none, empty, unknown fields only, wrong types, huge and non-finite
 * numbers, deep nesting, NUL and control characters, invalid UTF-8; multipart routes get hostile part names, file
 * names and text parts; YAML routes get alias bombs, self-referencing anchors, merge keys and odd tags. The bodies
 * are built on a plausible body per route, so each hostile member also reaches the services behind the schema.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type Schema = { type?: string; enum?: unknown[]; anyOf?: Schema[]; oneOf?: Schema[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; minItems?: number; minLength?: number; minimum?: number; format?: string };
type Body = { payload?: string | Buffer; headers: Record<string, string>; label: string };

/** Far past any row: a plausible id that deletes, moves or grants nothing. */
const NO_ROW = 2_000_000_000;
const BOUNDARY = 'versa-fuzz';

const deep = (open: string, close: string, depth: number) => open.repeat(depth) + close.repeat(depth);

/** Member values that break a type, a range, a string rule or the database. */
const HOSTILE: unknown[] = [
  'a\u0000b', 'bell\u0007', '', 'x'.repeat(70_000), '\ud800', 1e308, -1e308, -1, 0, 2 ** 63, 3.5, true, null,
  [], [[[[['x']]]]], {}, { 'k\u0000': 1 }, { zz_unknown: 1 },
];

const HOSTILE_INSIDE: unknown[] = ['a\u0000b', 'bell\u0007', 1e308, -1, 3.5, true, null, [[['x']]], {}];

/** Whole JSON bodies that no schema expects. */
const RAW_JSON: [string, string | Buffer][] = [
  ['no body', ''], ['{}', '{}'], ['[]', '[]'], ['null', 'null'], ['a string', '"x"'], ['a number', '0'], ['1e999', '1e999'],
  ['unknown fields only', '{"zz_unknown": 1, "zz_other": [1]}'], ['__proto__', '{"__proto__": {"isAdmin": true}, "constructor": {"prototype": {}}}'],
  ['nested arrays', deep('[', ']', 5000)], ['nested objects', deep('{"a":', '}', 5000).replace(/}$/, '1}')], ['cut off', '{"name": "x'],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])], ['lone surrogate escape', '{"name": "\\ud800"}'],
  ['NUL escape in a key', '{"\\u0000": 1}'], ['duplicate keys', '{"name": "a", "name": 1}'], ['a huge integer', '{"name": 123456789012345678901234567890}'],
];

const YAML_BODIES: [string, string | Buffer][] = [
  ['empty', ''], ['null', '~'], ['a scalar', 'just text'], ['a list', '- 1\n- 2\n'],
  ['self-referencing anchor', 'name: x\nsteps: &s\n  - id: a\n    type: select_images\n    params: {again: *s}\n'],
  ['self-referencing map', '&a {name: x, steps: [], self: *a}'],
  ['self merge', 'base: &b\n  <<: *b\nname: x\nsteps: []\n'],
  ['merge of a list', 'a: &a {x: 1}\nb:\n  <<: [*a, *a]\nname: x\nsteps: []\n'],
  ['unresolved alias', 'name: *nowhere\nsteps: []\n'],
  ['alias bomb', ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`), 'name: x', 'steps: []'].join('\n')],
  ['deep nesting', `name: x\nsteps: ${deep('[', ']', 3000)}\n`],
  ['odd tags', 'name: !!binary AAAA\ndescription: !!timestamp 2020-01-01\nsteps: !!set {a, b}\nx: !!omap [a: 1]\ny: !custom tag\n'],
  ['complex keys', '? [a, b]\n: 1\n? {c: d}\n: 2\nname: x\nsteps: []\n'],
  ['numbers', 'name: 1e400\ndescription: .nan\nsteps:\n  - id: .inf\n    type: 0x10\n    params: {limit: -.inf, n: 123456789012345678901234567890}\n'],
  ['several documents', 'name: a\nsteps: []\n---\nname: b\nsteps: []\n'],
  ['directives', '%YAML 1.1\n%TAG !e! tag:example.com,2000:\n---\nname: !e!x y\nsteps: []\n'],
  ['NUL bytes', 'name: "a\u0000"\nsteps: []\n'], ['escaped NUL and bell', 'name: "a\\0\\a"\nsteps: [{id: "\\0", type: "\\x07"}]\n'],
  ['invalid UTF-8', Buffer.concat([Buffer.from('name: "'), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"\nsteps: []\n')])],
  ['duplicate keys', 'name: a\nname: b\nsteps: []\n'],
];

/** A value the schema accepts, as far as a generator can tell: enough to get hostile members past the others. */
function plausible(schema: Schema | undefined, key = ''): unknown {
  if (!schema) return 'x';
  const choice = schema.anyOf ?? schema.oneOf;
  if (choice) return plausible(choice.find((s) => s.type !== 'null') ?? choice[0], key);
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'integer':
    case 'number':
      return /(^|_)ids?$/.test(key) ? NO_ROW : (schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => plausible(schema.items, key));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = plausible(schema.properties?.[name], name);
      return out;
    }
    default:
      return schema.format === 'email' ? 'fuzz@example.com' : 'f'.repeat(Math.max(schema.minLength ?? 1, 8));
  }
}

function jsonBodies(schema: Schema | undefined): Body[] {
  const json = (label: string, payload: string | Buffer): Body => ({ label, payload, headers: { 'content-type': 'application/json' } });
  const bodies = RAW_JSON.map(([label, payload]) => json(label, payload));
  for (const type of ['text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'application/yaml']) bodies.push({ label: type, payload: '{"name": "x"}', headers: { 'content-type': type } });
  const base = plausible(schema);
  bodies.push(json('plausible', JSON.stringify(base)));
  if (base === null || typeof base !== 'object' || Array.isArray(base)) return bodies;
  const members = Object.entries(schema?.properties ?? {});
  for (const value of HOSTILE) {
    const shown = JSON.stringify(value).slice(0, 30);
    for (const [member] of members) bodies.push(json(`${member}: ${shown}`, JSON.stringify({ ...base, [member]: value })));
    if (members.length > 1) bodies.push(json(`every member: ${shown}`, JSON.stringify(Object.fromEntries(members.map(([m]) => [m, value])))));
  }
  // One level down: the members of an object member, or of a list member's items (geometry, actions, steps…).
  for (const [member, memberSchema] of members) {
    const inList = memberSchema.type === 'array';
    const inner = inList ? memberSchema.items : (memberSchema.anyOf ?? memberSchema.oneOf ?? [memberSchema]).find((s) => s.properties);
    if (!inner?.properties) continue;
    const plain = plausible(inner) as Record<string, unknown>;
    for (const sub of Object.keys(inner.properties)) {
      for (const value of HOSTILE_INSIDE) {
        const item = { ...plain, [sub]: value };
        bodies.push(json(`${member}${inList ? '[0]' : ''}.${sub}: ${JSON.stringify(value).slice(0, 30)}`, JSON.stringify({ ...base, [member]: inList ? [item] : item })));
      }
    }
  }
  return bodies;
}

/** A multipart body built byte for byte, so that names can hold what no client library would send. */
function form(label: string, parts: [disposition: Buffer | string, data: Buffer | string][]): Body {
  const chunks = parts.flatMap(([disposition, data]) => [Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; `), Buffer.from(disposition), Buffer.from('\r\n\r\n'), Buffer.from(data), Buffer.from('\r\n')]);
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { label, payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } };
}

function multipartBodies(schema: Schema | undefined, fileBytes: Buffer): Body[] {
  const fileField = Object.entries(schema?.properties ?? {}).find(([, s]) => s.format === 'binary' || s.items?.format === 'binary')?.[0] ?? 'file';
  const textFields = Object.keys(schema?.properties ?? {}).filter((name) => name !== fileField);
  const file = `name="${fileField}"; filename="data.bin"`;
  const invalidUtf8 = Buffer.from([0xff, 0xfe, 0xc3, 0x28]);
  const bodies: Body[] = [
    { label: 'JSON instead of multipart', payload: '{}', headers: { 'content-type': 'application/json' } },
    { label: 'no boundary', payload: 'x', headers: { 'content-type': 'multipart/form-data' } },
    form('no parts', []),
    form('garbage file', [[file, Buffer.from('garbage \u0000 bytes')]]),
    form('plausible file', [[file, fileBytes]]),
    form('NUL in the file name', [[`name="${fileField}"; filename="a\u0000.bin"`, fileBytes]]),
    form('control character in the file name', [[`name="${fileField}"; filename="a\u001b[31m.bin"`, fileBytes]]),
    form('invalid UTF-8 file name', [[Buffer.concat([Buffer.from(`name="${fileField}"; filename="`), invalidUtf8, Buffer.from('.bin"')]), fileBytes]]),
    form('invalid UTF-8 part name', [[Buffer.concat([Buffer.from('name="'), invalidUtf8, Buffer.from('"; filename="a.bin"')]), fileBytes]]),
    form('undecodable filename*', [[`name="${fileField}"; filename*=x-unknown''%ff%fe`, fileBytes]]),
    form('path in the file name', [[`name="${fileField}"; filename="../../etc/passwd"`, fileBytes]]),
  ];
  for (const field of textFields) {
    for (const [shown, value] of [['NUL', 'a\u0000b'], ['bell', 'a\u0007b'], ['invalid UTF-8', invalidUtf8], ['1e999', '1e999'], ['empty', ''], ['JSON', '{"a": [1e999]}'], ['long', 'x'.repeat(100_000)]] as const) {
      bodies.push(form(`${field}: ${shown}`, [[file, fileBytes], [`name="${field}"`, value]]));
    }
  }
  return bodies;
}

describe('hostile bodies on every route that takes one', () => {
  let t: TestApp;
  let alice: Client & { id: number };
  const ids: Record<string, number> = {};

  before(async () => {
    t = await startTestApp();
    await t.user(); // the first account is instance admin and sees everything; keep it out of the way
    alice = await t.user();
    const bob = await t.user();
    const created = async (url: string, body: unknown) => {
      const res = await alice.post(url, body);
      assert.equal(res.status, 201, `${url}: ${JSON.stringify(res.body)}`);
      return res.body.id as number;
    };
    ids.user = bob.id;
    ids.project = await created('/api/projects', { name: 'fuzzed', project_type: 'object_detection' });
    ids.samplesProject = await created('/api/projects', { name: 'fuzzed samples', project_type: 'classification' });
    ids.class = await created(`/api/projects/${ids.project}/classes`, { name: 'cat' });
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
    const upload = await alice.request({ method: 'POST', url: `/api/projects/${ids.project}/images`, ...multipart([{ filename: 'a.png', data: png, contentType: 'image/png' }]) });
    ids.image = upload.body.images[0].id;
    ids.annotation = await created(`/api/images/${ids.image}/annotations`, { class_id: ids.class, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } });
    ids.sample = await created(`/api/projects/${ids.samplesProject}/samples`, { modality: 'text', data: { text: 'hello' }, label: 'cat' });
    ids.pipeline = await created('/api/pipelines', { project_id: ids.project });
    ids.org = await created('/api/orgs', { name: 'fuzz org' });
    assert.equal((await alice.post(`/api/projects/${ids.project}/members`, { user_id: bob.id, role: 'annotator' })).status, 201);
    const model = await alice.request({ method: 'POST', url: `/api/projects/${ids.project}/models/upload`, ...multipart([{ name: 'file', filename: 'd.onnx', data: Buffer.from(buildYoloModel('v8')) }]) });
    ids.model = model.body.id;
    const experiment = await t.versa.deps.db.insertInto('experiments').values({
      project_id: ids.project, version_id: null, job_id: null, model_id: null, name: 'fuzzed', tags: '[]', notes: '', status: 'succeeded', adapter: 'versa-detect',
      params: '{}', metrics: '{}', history: '[]', per_class: '[]', extra: '{}', best_epoch: null, epoch: 0, error: null, run_dir: null, created_by: alice.id,
      created_at: new Date().toISOString(), finished_at: null, duration_s: null,
    }).returning('id').executeTakeFirstOrThrow();
    ids.experiment = experiment.id;
  });
  after(() => t.close());

  /** The route's URL with the fixtures' ids (samples routes on the samples project); other ids name no row. */
  const urlOf = (route: string) => {
    const samples = /\/(samples|import\/(text|tabular|jsonl)|adapters)\b/.test(route);
    const byPrefix: [RegExp, number][] = [
      [/^\/api\/projects\/:(id|project_id)/, samples ? ids.samplesProject : ids.project], [/^\/api\/experiments\/:id/, ids.experiment],
      [/^\/api\/pipelines\/:id/, ids.pipeline], [/^\/api\/orgs\/:id/, ids.org], [/^\/api\/annotations\/:id/, ids.annotation],
    ];
    const named: Record<string, number> = { class_id: ids.class, image_id: ids.image, sample_id: ids.sample, model_id: ids.model, user_id: ids.user };
    return route.replace(/:(\w+)/g, (param, name: string, at: number) => {
      const prefixed = byPrefix.find(([pattern]) => pattern.test(route.slice(0, at + param.length)));
      return String(prefixed?.[1] ?? named[name] ?? NO_ROW);
    });
  };

  it('PATCH /api/experiments/{id} with unknown fields only is 422, not 500, and changes nothing', async () => {
    const res = await alice.patch(`/api/experiments/${ids.experiment}`, { zz_unknown: 1 });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.ok(res.body.detail);
    assert.equal((await alice.get(`/api/experiments/${ids.experiment}`)).body.name, 'fuzzed');
  });

  it('a self-referencing YAML anchor is 422 naming its line, not 500', async () => {
    const text = 'name: x\nsteps: &s\n  - id: a\n    type: select_images\n    params: {again: *s}\n';
    for (const url of ['/api/pipelines/validate-yaml', `/api/pipelines/from-yaml?project_id=${ids.project}`]) {
      const res = await alice.request({ method: 'POST', url, payload: text, headers: { 'content-type': 'application/yaml' } });
      assert.equal(res.status, 422, `${url}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.detail[0].msg, /self-referencing anchor/);
      assert.equal(res.body.detail[0].line, 5);
    }
    const put = await alice.put(`/api/pipelines/${ids.pipeline}`, { yaml: text });
    assert.equal(put.status, 422, JSON.stringify(put.body));
  });

  it('keeps a JSON body\'s types: {"ids": true} is 422 and deletes nothing, while a query string is still read as numbers', async () => {
    for (const body of [{ ids: true }, { ids: [`${ids.project}`] }, { ids: ids.project }]) {
      const res = await alice.post('/api/projects/bulk-delete', body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.ok(res.body.detail);
    }
    assert.equal((await alice.get(`/api/projects/${ids.project}`)).status, 200);
    const page = await alice.get(`/api/projects/${ids.project}/images?limit=1&offset=0`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.length ?? page.body.items.length, 1);
  });

  it('no hostile body gets a 5xx, and every refusal has a detail', async () => {
    const spec = (await alice.get('/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>> };
    // Bulk deletes go last: the schemas coerce `true` to the id 1, which is the fixtures' project and image.
    const last = (url: string) => (url.endsWith('/bulk-delete') ? 1 : 0);
    const routes = t.versa.routes.filter((r) => ['POST', 'PATCH', 'PUT'].includes(r.method) && r.url !== '/api/auth/logout').sort((a, b) => last(a.url) - last(b.url));
    assert.ok(routes.length > 60, `found only ${routes.length} routes`);
    const fileBytes = Buffer.from('{"text": "hello", "label": "cat"}\n');
    const failures: string[] = [];
    let sent = 0;
    for (const { method, url: route } of routes) {
      const operation = spec.paths[route.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
      const content = operation?.requestBody?.content ?? {};
      const isYaml = route.endsWith('-yaml');
      const bodies = isYaml
        ? YAML_BODIES.map(([label, payload]): Body => ({ label, payload, headers: { 'content-type': 'application/yaml' } }))
        : content['multipart/form-data']
          ? multipartBodies(content['multipart/form-data'].schema, fileBytes)
          : jsonBodies(content['application/json']?.schema);
      if (route === '/api/pipelines/:id') bodies.push(...YAML_BODIES.map(([label, yaml]): Body => ({ label: `yaml: ${label}`, payload: JSON.stringify({ yaml: yaml.toString() }), headers: { 'content-type': 'application/json' } })));
      if (route === '/api/pipelines' || route === '/api/pipelines/validate') {
        for (const value of HOSTILE) bodies.push({ label: `steps: ${JSON.stringify(value).slice(0, 30)}`, payload: JSON.stringify({ project_id: ids.project, definition: { name: 'x', steps: [{ id: 'a', type: 'select_images', params: value }] }, name: 'x', steps: value }), headers: { 'content-type': 'application/json' } });
      }
      const url = urlOf(route);
      for (const body of bodies) {
        sent++;
        const res = await alice.request({ method: method as 'POST', url, payload: body.payload, headers: body.headers });
        const refusedWithoutDetail = res.status >= 400 && (res.body === null || typeof res.body !== 'object' || !('detail' in res.body));
        if (res.status >= 500 || refusedWithoutDetail) failures.push(`${method} ${route} [${body.label}] → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
    }
    await t.versa.deps.queue.drain();
    assert.deepEqual(failures, [], `${failures.length} of ${sent} requests failed`);
  });
});
