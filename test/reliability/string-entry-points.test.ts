/**
 * Issue 24, item 4: one input rule for every way a string enters, on SQLite and PostgreSQL alike. JSON bodies refuse
 * a NUL anywhere and control characters in names (hostile-input.test.ts); the same 422 now answers a multipart part
 * (image and archive file names, the model `name` part, sample import fields), a string read from a sample import
 * (a JSONL or CSV class name, a tabular column or target value) and a YAML pipeline (`"\0"` escapes), and the
 * refused request changes nothing. Free text keeps its tabs and line breaks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { multipart } from '../helpers/multipart.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

const BOUNDARY = 'versa-hostile-boundary';

/** A multipart body built byte for byte: each part's Content-Disposition parameters as given (NULs and all). */
function form(parts: [disposition: string, data: Buffer | string][]) {
  const chunks = parts.flatMap(([disposition, data]) => [Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\n`), Buffer.from(data), Buffer.from('\r\n')]);
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } };
}

describe('control characters through non-JSON inputs', () => {
  let t: TestApp;
  let alice: User;
  let png: Buffer;

  before(async () => {
    t = await startTestApp();
    await t.user(); // the first account is instance admin; keep it out of the way
    alice = await t.user();
    png = await sharp({ create: { width: 16, height: 16, channels: 3, background: { r: 9, g: 8, b: 7 } } }).png().toBuffer();
  });
  after(() => t.close());

  const project = async (client: Client, project_type = 'object_detection') => {
    const res = await client.post('/api/projects', { name: 'p', project_type });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as number;
  };
  const rows = async (table: 'images' | 'models' | 'samples' | 'pipelines' | 'projects') =>
    Number((await t.versa.deps.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const detail = (res: { body: any }) => JSON.stringify(res.body.detail);

  it('an image file name with a NUL or a control character is 422 and stores no image', async () => {
    const projectId = await project(alice);
    const url = `/api/projects/${projectId}/images`;
    const flipped = await sharp(png).flip().png().toBuffer();
    for (const filename of ['filename="a\u0000b.png"', "filename*=UTF-8''a%00b.png", 'filename="bell\u0007.png"', 'filename="tab\t.png"']) {
      // A good file first: the refused part fails the whole request, which then keeps nothing of the first.
      const res = await alice.request({ method: 'POST', url, ...form([['name="files"; filename="ok.png"', flipped], [`name="files"; ${filename}`, png]]) });
      assert.equal(res.status, 422, `${filename}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.detail[0].loc, ['body', 'files', 'filename']);
    }
    assert.equal(await rows('images'), 0);
    const ok = await alice.request({ method: 'POST', url, ...multipart([{ filename: 'plain name.png', data: png, contentType: 'image/png' }]) });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  it('a model upload whose `name` part holds a NUL or a control character is 422 (PostgreSQL answered 500)', async () => {
    const projectId = await project(alice);
    const model = Buffer.from(buildYoloModel('v8'));
    const before = await rows('models');
    for (const name of ['det\u0000ector', 'det\u001bector']) {
      const res = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'd.onnx', data: model }], { name }) });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.deepEqual(res.body.detail[0].loc, ['body', 'name']);
      // The name part after the file: the file already read is dropped with the request.
      const late = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...form([['name="file"; filename="d.onnx"', model], ['name="name"', name]]) });
      assert.equal(late.status, 422, JSON.stringify(late.body));
    }
    const named = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'd\u0007.onnx', data: model }]) });
    assert.equal(named.status, 422, JSON.stringify(named.body));
    assert.equal(await rows('models'), before);
  });

  it('model class names with a control character are 422, uploaded (JSON list or one per line) or registered by path', async () => {
    const projectId = await project(alice);
    const model = Buffer.from(buildYoloModel('v8'));
    const before = await rows('models');
    for (const names of [JSON.stringify(['cat', 'd\u001bog']), 'cat\nd\u0007og']) {
      const res = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'd.onnx', data: model }], { class_names: names }) });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.deepEqual(res.body.detail[0].loc, ['body', 'class_names', 1], JSON.stringify(res.body));
    }
    const registered = await alice.post(`/api/projects/${projectId}/models`, { path: 'missing.onnx', class_names: ['cat', 'd\u0000og'] });
    assert.equal(registered.status, 422, JSON.stringify(registered.body));
    const lines = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'd.onnx', data: model }], { class_names: 'cat\ndog' }) });
    assert.equal(lines.status, 201, JSON.stringify(lines.body));
    assert.deepEqual(lines.body.class_names, ['cat', 'dog']);
    assert.equal(await rows('models'), before + 1);
  });

  it('an archive import whose file name holds a NUL is 422 and creates no project', async () => {
    const before = await rows('projects');
    const res = await alice.request({ method: 'POST', url: '/api/projects/import', ...form([['name="file"; filename="set\u0000.zip"', 'PK']]) });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(res.body.detail[0].loc, ['body', 'file', 'filename']);
    assert.equal(await rows('projects'), before);
  });

  it('sample imports: a class name with a control character, or a NUL anywhere, is 422 naming the line; text keeps its line breaks', async () => {
    const projectId = await project(alice, 'classification');
    const importText = (data: string, fields: Record<string, string> = {}, kind = 'text') =>
      alice.request({ method: 'POST', url: `/api/projects/${projectId}/import/${kind}`, ...multipart([{ name: 'file', filename: 'data.jsonl', data: Buffer.from(data) }], fields) });
    const refused: [string, string, Record<string, string>?, string?][] = [ // each breaks the rule on its second record
      ['JSONL label', jsonl([{ text: 'fine', label: 'cat' }, { text: 'a dog', label: 'do\u0007g' }])],
      ['JSONL label list', jsonl([{ text: 'fine', label: 'cat' }, { text: 'a dog', label: ['dog', 'n\u0000l'] }])],
      ['JSONL span label', jsonl([{ text: 'fine', label: 'cat' }, { text: 'a dog', spans: [[2, 5, 'an\u001bimal']] }])],
      ['JSONL text with a NUL', jsonl([{ text: 'fine', label: 'cat' }, { text: 'nul \u0000 here', label: 'dog' }])],
      ['JSONL metadata with a NUL', jsonl([{ text: 'fine', label: 'cat' }, { text: 'dog', label: 'dog', source: 'x\u0000' }])],
      ['CSV label', 'text,label\nfine,cat\na dog,do\u0007g\n'],
      ['CSV text with a NUL', 'text,label\nfine,cat\nnul \u0000 here,dog\n'],
      ['tabular target', 'x,y\n1,cat\n2,do\u0007g\n', { target: 'y' }, 'tabular'],
      ['tabular cell with a NUL', 'x,y\n1,cat\na\u0000b,dog\n', { target: 'y' }, 'tabular'],
      ['LLM metadata name', jsonl([{ prompt: 'p', response: 'r' }, { prompt: 'p', response: 'r', name: 'bell\u0007' }]), { modality: 'llm' }, 'jsonl'],
    ];
    for (const [what, data, fields, kind] of refused) {
      const res = await importText(data, fields, kind);
      assert.equal(res.status, 422, `${what}: ${JSON.stringify(res.body)}`);
      // A CSV's second record is on line 3, under its header.
      assert.match(detail(res), data.startsWith('{') ? /line 2 / : /line 3 /, what);
      assert.match(detail(res), /NUL|control/, what);
    }
    const header = await importText('x,c\u0007ol\n1,a\n2,b\n', { target: 'x' }, 'tabular');
    assert.equal(header.status, 422, JSON.stringify(header.body));
    assert.match(detail(header), /line 1 .*control/);
    assert.equal(await rows('samples'), 0);

    // A multipart text part of an import holds to the same rule.
    const field = await importText(jsonl([{ text: 'fine', label: 'cat' }]), { label_field: 'la\u0000bel' });
    assert.equal(field.status, 422, JSON.stringify(field.body));
    assert.deepEqual(field.body.detail[0].loc, ['body', 'label_field']);

    const content = 'line one\nline two\twith a tab\r\nand a return';
    const kept = await importText(jsonl([{ text: content, label: 'cat' }, { text: 'second', label: 'dog' }]));
    assert.equal(kept.status, 201, JSON.stringify(kept.body));
    const listed = (await alice.get(`/api/projects/${projectId}/samples`)).body;
    assert.ok(listed.some((s: any) => s.data.text === content));
  });

  it('a JSON sample whose label holds a control character is 422 like a class created by name', async () => {
    const projectId = await project(alice, 'classification');
    const res = await alice.post(`/api/projects/${projectId}/samples`, { modality: 'text', data: { text: 'x' }, label: 'ca\u0001t' });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal((await alice.get(`/api/projects/${projectId}/classes`)).body.length, 0);
  });

  it('a YAML pipeline with "\\0" or a control character in a name is 422 naming the path and line', async () => {
    const yaml = (url: string, text: string) => alice.request({ method: 'POST', url, payload: text, headers: { 'content-type': 'application/yaml' } });
    const projectId = await project(alice);
    const before = await rows('pipelines');
    const nul = 'name: ppe\nsteps:\n  - id: pick\n    type: select_images\n    params:\n      tag: "a\\0b"\n';
    for (const url of [`/api/pipelines/from-yaml?project_id=${projectId}`, '/api/pipelines/validate-yaml']) {
      const res = await yaml(url, nul);
      assert.equal(res.status, 422, `${url}: ${JSON.stringify(res.body)}`);
      const [issue] = res.body.detail;
      assert.equal(issue.path, 'steps[0].params.tag');
      assert.equal(issue.line, 6);
      assert.match(issue.msg, /NUL/);
    }
    const bell = await yaml(`/api/pipelines/from-yaml?project_id=${projectId}`, 'name: "ppe\\a"\nsteps:\n  - id: pick\n    type: select_images\n');
    assert.equal(bell.status, 422, JSON.stringify(bell.body));
    assert.equal(bell.body.detail[0].path, 'name');
    assert.match(bell.body.detail[0].msg, /control/);
    const inf = await yaml('/api/pipelines/validate-yaml', 'name: ppe\nsteps:\n  - id: pick\n    type: select_images\n    params: {limit: .inf}\n');
    assert.equal(inf.status, 422, JSON.stringify(inf.body));

    const created = await yaml(`/api/pipelines/from-yaml?project_id=${projectId}`, 'name: ppe\ndescription: "two\\nlines\\tand a tab"\nsteps:\n  - id: pick\n    type: select_images\n');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.description, 'two\nlines\tand a tab');
    const put = await alice.put(`/api/pipelines/${created.body.id}`, { yaml: nul });
    assert.equal(put.status, 422, JSON.stringify(put.body));
    assert.equal(await rows('pipelines'), before + 1);
  });
});
