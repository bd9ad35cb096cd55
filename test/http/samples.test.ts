import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { mp4File, wavFile } from '../helpers/media-fixtures.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip } from '../helpers/zip-build.js';
import { zipEntries } from '../helpers/zip-entries.js';

async function project(client: Client, name = 'samples'): Promise<number> {
  const res = await client.post('/api/projects', { name, project_type: 'classification' });
  assert.equal(res.status, 201);
  return res.body.id;
}

function upload(client: Client, url: string, data: Buffer | string, fields: Record<string, string> = {}, filename = 'data.bin') {
  const { payload, headers } = multipart([{ name: 'file', filename, data: Buffer.isBuffer(data) ? data : Buffer.from(data) }], fields);
  return client.request({ method: 'POST', url, payload, headers });
}

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

describe('samples', () => {
  let t: TestApp;
  let owner: Client & { id: number };
  let stranger: Client;
  let anonymous: Client;
  let pid: number;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    stranger = await t.user();
    anonymous = t.client();
    pid = await project(owner);
  });
  after(() => t.close());

  const count = async (projectId: number) =>
    Number((await t.versa.deps.db.selectFrom('samples').select((eb) => eb.fn.countAll().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow()).n);

  it('answers 401 without credentials and 404 for a foreign project on every route', async () => {
    const created = await owner.post(`/api/projects/${pid}/samples`, { modality: 'text', data: { text: 'hello' } });
    assert.equal(created.status, 201);
    const sid = created.body.id;
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/projects/${pid}/samples`],
      ['POST', `/api/projects/${pid}/samples`, { modality: 'text', data: { text: 'x' } }],
      ['GET', `/api/samples/${sid}`],
      ['PATCH', `/api/samples/${sid}`, { value: 1 }],
      ['GET', `/api/samples/${sid}/file`],
      ['GET', `/api/samples/${sid}/lock`],
      ['POST', `/api/samples/${sid}/lock`],
      ['DELETE', `/api/samples/${sid}/lock`],
      ['GET', `/api/samples/${sid}/revisions`],
      ['POST', `/api/projects/${pid}/samples/splits`, { train: 80, valid: 10, test: 10 }],
      ['GET', `/api/projects/${pid}/samples/target`],
      ['POST', `/api/projects/${pid}/adapters/prepare`, { adapter: 'hub' }],
    ];
    for (const [method, url, payload] of routes) {
      const anon = await anonymous.request({ method: method as 'GET', url, payload: payload as object });
      assert.equal(anon.status, 401, `${method} ${url} anonymous`);
      const foreign = await stranger.request({ method: method as 'GET', url, payload: payload as object });
      assert.equal(foreign.status, 404, `${method} ${url} stranger`);
    }
    for (const kind of ['text', 'tabular', 'jsonl']) {
      const url = `/api/projects/${pid}/import/${kind}`;
      const fields = { target: 'y', modality: 'llm' };
      assert.equal((await upload(anonymous, url, 'x', fields)).status, 401);
      assert.equal((await upload(stranger, url, '{"text":"a","prompt":"p"}\n', fields)).status, 404);
    }
    assert.equal(await count(pid), 1);
  });

  it('creates samples one by one or in a list, validating spans against the text', async () => {
    const p = await project(owner, 'create');
    const one = await owner.post(`/api/projects/${p}/samples`, { modality: 'text', data: { text: 'Paris is nice' }, spans: [{ start: 0, end: 5, label: 'LOC' }], label: 'travel' });
    assert.equal(one.status, 201);
    assert.deepEqual(one.body.spans, [{ start: 0, end: 5, label: 'LOC' }]);
    assert.equal(one.body.label, 'travel');
    const classes = (await owner.get(`/api/projects/${p}/classes`)).body.map((c: { name: string }) => c.name).sort();
    assert.deepEqual(classes, ['LOC', 'travel']);

    const many = await owner.post(`/api/projects/${p}/samples`, { items: [
      { modality: 'llm', data: { prompt: 'Hi', chosen: 'Hello!', rejected: 'Go away' }, value: { rating: 4 } },
      { modality: 'tabular', data: { row: { a: 1, b: 'x' } }, value: 2.5 },
    ] });
    assert.equal(many.status, 201);
    assert.equal(many.body.created, 2);
    assert.deepEqual(many.body.items[0].value, { rating: 4 });

    const outside = await owner.post(`/api/projects/${p}/samples`, { items: [
      { modality: 'text', data: { text: 'ok' } },
      { modality: 'text', data: { text: 'short' }, spans: [{ start: 2, end: 9, label: 'X' }] },
    ] });
    assert.equal(outside.status, 422);
    assert.deepEqual(outside.body.detail[0].loc, ['body', 'items', 1]);
    // A span ending between the two halves of 😀 (a surrogate pair) is refused.
    const cut = await owner.post(`/api/projects/${p}/samples`, { modality: 'text', data: { text: 'a😀b' }, spans: [{ start: 0, end: 2, label: 'E' }] });
    assert.equal(cut.status, 422);
    assert.match(cut.body.detail[0].msg, /surrogate/);
    const whole = await owner.post(`/api/projects/${p}/samples`, { modality: 'text', data: { text: 'a😀b' }, spans: [{ start: 1, end: 3, label: 'E' }] });
    assert.equal(whole.status, 201);
    const bad = await owner.post(`/api/projects/${p}/samples`, { modality: 'text', data: {} });
    assert.equal(bad.status, 422);
    assert.equal(await count(p), 4);
    const projectOut = (await owner.get(`/api/projects/${p}`)).body;
    assert.equal(projectOut.sample_count, 4);
    assert.equal(projectOut.labelled_sample_count, 4);
    const stats = (await owner.get('/api/stats')).body;
    assert.ok(stats.total_samples >= 4);
  });

  it('imports text JSONL with spans in both forms, and stores nothing when one line is bad', async () => {
    const p = await project(owner, 'text');
    const good = jsonl([
      { text: 'Alice met Bob', label: 'greeting', spans: [{ start: 0, end: 5, label: 'PER' }] },
      { text: 'Bob left', label: ['leaving', 'greeting'], entities: [[0, 3, 'PER']] },
      { text: 'nothing', split: 'test' },
    ]);
    const res = await upload(owner, `/api/projects/${p}/import/text`, good);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body, { created: 3, modality: 'text', classes: ['PER', 'greeting', 'leaving'] });
    const list = await owner.get(`/api/projects/${p}/samples`);
    assert.deepEqual(list.body.map((s: any) => s.data.text), ['Alice met Bob', 'Bob left', 'nothing']);
    assert.deepEqual(list.body[1].label, ['leaving', 'greeting']);
    assert.deepEqual(list.body[1].spans, [{ start: 0, end: 3, label: 'PER' }]);
    assert.equal(list.body[2].split, 'test');

    const filtered = await owner.get(`/api/projects/${p}/samples?label=greeting`);
    assert.deepEqual(filtered.body.map((s: any) => s.data.text), ['Alice met Bob', 'Bob left']);
    assert.equal(filtered.headers['x-total-count'], '2');

    const before = await count(p);
    const classesBefore = (await owner.get(`/api/projects/${p}/classes`)).body.length;
    for (const [body, line] of [
      [jsonl([{ text: 'ok', label: 'newclass' }]) + '{not json}\n', 2],
      [jsonl([{ text: 'ok' }, { text: 'abc', spans: [[1, 7, 'X']] }]), 2],
      [jsonl([{ text: 'ok' }, { txt: 'wrong field' }]), 2],
    ] as const) {
      const r = await upload(owner, `/api/projects/${p}/import/text`, body);
      assert.equal(r.status, 422, body);
      assert.equal(r.body.detail[0].loc.at(-1), line);
      assert.match(r.body.detail[0].msg, new RegExp(`line ${line}`));
    }
    assert.equal(await count(p), before);
    assert.equal((await owner.get(`/api/projects/${p}/classes`)).body.length, classesBefore, 'no class left behind');
  });

  it('imports text CSV with configured field names; an unknown field name is 422', async () => {
    const p = await project(owner, 'text csv');
    const csv = 'body,category\n"Hello, world",greet\n=SUM(A1),math\n';
    const res = await upload(owner, `/api/projects/${p}/import/text`, csv, { text_field: 'body', label_field: 'category' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.created, 2);
    const list = (await owner.get(`/api/projects/${p}/samples`)).body;
    assert.equal(list[1].data.text, '=SUM(A1)', 'stored as text, never evaluated');
    const unknown = await upload(owner, `/api/projects/${p}/import/text`, csv, { text_field: 'body', label_field: 'nope' });
    assert.equal(unknown.status, 422);
    assert.match(unknown.body.detail[0].msg, /nope/);
    const quoted = await upload(owner, `/api/projects/${p}/import/text`, 'text,label\na,b\nc "d" e,f\n');
    assert.equal(quoted.status, 422);
    assert.equal(quoted.body.detail[0].loc.at(-1), 3);
    const ragged = await upload(owner, `/api/projects/${p}/import/text`, 'text,label\na,b\nc,d,e\n');
    assert.equal(ragged.status, 422);
    assert.equal(ragged.body.detail[0].loc.at(-1), 3);
    assert.equal(await count(p), 2);
  });

  it('imports tabular CSV with inferred column types and nulls, and prepares the tabular folder', async () => {
    const p = await project(owner, 'tabular');
    const rows = ['age,income,member,city,joined,note,species'];
    for (let i = 0; i < 30; i++) {
      rows.push(`${20 + i},${(1000.5 + i * 10).toFixed(1)},${i % 2 ? 'true' : 'false'},${['Oslo', 'Rome', 'Lima'][i % 3]},2024-01-${String(1 + (i % 28)).padStart(2, '0')},${i === 3 ? '' : `note number ${i}`},${i % 3 === 0 ? 'setosa' : 'virginica'}`);
    }
    rows[5] = rows[5].replace(/^\d+/, ''); // a missing age
    rows.push('50,2000,true,Oslo,2024-02-01,"=HYPERLINK(""x"")",setosa');
    const res = await upload(owner, `/api/projects/${p}/import/tabular`, rows.join('\n') + '\n', { target: 'species' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.created, 31);
    assert.equal(res.body.task, 'classification');
    assert.deepEqual(res.body.columns, { age: 'integer', income: 'number', member: 'boolean', city: 'category', joined: 'date', note: 'text', species: 'category' });
    assert.deepEqual(res.body.classes, ['setosa', 'virginica']);
    const list = (await owner.get(`/api/projects/${p}/samples?limit=5`)).body;
    assert.equal(list[4].data.row.age, null, 'missing value kept as null');
    assert.equal(list[0].data.row.member, false);
    assert.equal(list[0].label, 'setosa');

    const splits = await owner.post(`/api/projects/${p}/samples/splits`, { train: 60, valid: 20, test: 20, strategy: 'stratified', seed: 7 });
    assert.equal(splits.status, 200);
    assert.equal(splits.body.train + splits.body.valid + splits.body.test, 31);
    const first = (await owner.get(`/api/projects/${p}/samples?limit=100`)).body.map((s: any) => s.split);
    await owner.post(`/api/projects/${p}/samples/splits`, { train: 60, valid: 20, test: 20, strategy: 'stratified', seed: 7 });
    assert.deepEqual((await owner.get(`/api/projects/${p}/samples?limit=100`)).body.map((s: any) => s.split), first, 'seeded and repeatable');
    const setosaTrain = (await owner.get(`/api/projects/${p}/samples?label=setosa&split=train`)).headers['x-total-count'];
    assert.ok(Number(setosaTrain) >= 6 && Number(setosaTrain) <= 7, `stratified: ${setosaTrain} of 11 setosa in train`);

    const prepared = await owner.post(`/api/projects/${p}/adapters/prepare`, { adapter: 'tabular' });
    assert.equal(prepared.status, 201, JSON.stringify(prepared.body));
    assert.deepEqual(prepared.body.files.map((f: any) => f.name), ['train.csv', 'valid.csv', 'test.csv', 'schema.json']);
    const schema = JSON.parse((await owner.get(prepared.body.files[3].url)).raw.toString());
    assert.deepEqual(schema, { target: 'species', task: 'classification', columns: res.body.columns, classes: ['setosa', 'virginica'] });
    const csvs = await Promise.all(prepared.body.files.slice(0, 3).map(async (f: any) => (await owner.get(f.url)).raw.toString()));
    assert.ok(csvs.every((c) => c.startsWith('age,income,member,city,joined,note,species\n')));
    assert.equal(csvs.join('').split('\n').filter((l) => l && !l.startsWith('age,')).length, 31);
    assert.ok(csvs.join('').includes(`,"=HYPERLINK(""x"")",`), 'cells as imported: a trainer\'s data is not neutralised for spreadsheets');

    const ragged = await upload(owner, `/api/projects/${p}/import/tabular`, 'a,b,y\n1,2,3\n4,5\n', { target: 'y' });
    assert.equal(ragged.status, 422);
    assert.equal(ragged.body.detail[0].loc.at(-1), 3);
    const noTarget = await upload(owner, `/api/projects/${p}/import/tabular`, 'a,b\n1,2\n', { target: 'y' });
    assert.equal(noTarget.status, 422);
    assert.equal((await upload(owner, `/api/projects/${p}/import/tabular`, 'a,b\n1,2\n')).status, 422);
    assert.equal(await count(p), 31);
  });

  it('treats a numeric target as regression and stratifies by its quantiles', async () => {
    const p = await project(owner, 'regression');
    const rows = ['x,price'];
    for (let i = 0; i < 50; i++) rows.push(`${i},${(i * 1.5).toFixed(2)}`);
    const res = await upload(owner, `/api/projects/${p}/import/tabular`, rows.join('\n'), { target: 'price' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.task, 'regression');
    const list = (await owner.get(`/api/projects/${p}/samples?limit=3`)).body;
    assert.equal(list[2].value, 3);
    assert.equal(list[2].label, null);
    const splits = await owner.post(`/api/projects/${p}/samples/splits`, { train: 80, valid: 10, test: 10, seed: 1 });
    assert.deepEqual([splits.body.train, splits.body.valid, splits.body.test], [40, 5, 5]);
    const bad = await owner.post(`/api/projects/${p}/samples/splits`, { train: 80, valid: 10, test: 5 });
    assert.equal(bad.status, 422);
  });

  it("says the tabular target's kind from the import's declaration, else from every tabular row, never from a page of them", async () => {
    const target = async (p: number) => (await owner.get(`/api/projects/${p}/samples/target`)).body;
    const none = await project(owner, 'no tabular');
    assert.deepEqual(await target(none), { column: null, task: null });
    // Declared regression whose first 300 rows have no target: a page of them would look like classes.
    const declared = await project(owner, 'declared regression');
    const rows = ['x,price', ...Array.from({ length: 300 }, (_, i) => `${i},`), '300,12.5'];
    const res = await upload(owner, `/api/projects/${declared}/import/tabular`, rows.join('\n'), { target: 'price', task: 'regression' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual((await owner.get(`/api/projects/${declared}/samples?modality=tabular&limit=200`)).body.filter((r: { value: unknown }) => r.value !== null), []);
    assert.deepEqual(await target(declared), { column: 'price', task: 'regression' });
    // Declared classification of digits: classes, though they read like numbers.
    const grades = await project(owner, 'grades');
    assert.equal((await upload(owner, `/api/projects/${grades}/import/tabular`, 'x,grade\n1,3\n2,4\n', { target: 'grade', task: 'classification' })).status, 201);
    assert.deepEqual(await target(grades), { column: 'grade', task: 'classification' });
    // Created without an import: a class on every row but the 301st, which holds a number → regression.
    const created = await project(owner, 'created rows');
    const items = Array.from({ length: 300 }, (_, i) => ({ modality: 'tabular', data: { row: { i } }, label: 'a' }));
    assert.equal((await owner.post(`/api/projects/${created}/samples`, { items })).status, 201);
    assert.deepEqual(await target(created), { column: null, task: 'classification' });
    assert.equal((await owner.post(`/api/projects/${created}/samples`, { modality: 'tabular', data: { row: { i: 300 } }, value: 7 })).status, 201);
    assert.deepEqual(await target(created), { column: null, task: 'regression' });
  });

  it('imports audio and video from a zip, probes them by content and serves byte ranges', async () => {
    const p = await project(owner, 'media');
    const wav = wavFile(1.5);
    const zip = await buildZip([
      { name: 'clips.jsonl', data: jsonl([
        { file: 'a/one.wav', label: 'speech', segments: [{ start_s: 0.1, end_s: 1.2, label: 'word' }], transcript: 'hello' },
        { file: 'two.bin', label: 'noise', speaker: 'x' },
      ]) },
      { name: 'a/one.wav', data: wav },
      { name: 'two.bin', data: wav },
    ]);
    const res = await upload(owner, `/api/projects/${p}/import/jsonl`, zip, { modality: 'audio' }, 'clips.zip');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.created, 2);
    const [one, two] = (await owner.get(`/api/projects/${p}/samples`)).body;
    assert.equal(one.data.duration_s, 1.5);
    assert.equal(one.data.sample_rate, 8000);
    assert.equal(one.data.mime_type, 'audio/wav');
    assert.equal(one.value, 'hello');
    assert.deepEqual(one.spans, [{ start_s: 0.1, end_s: 1.2, label: 'word' }]);
    assert.deepEqual(two.metadata, { speaker: 'x' });

    const whole = await owner.get(one.data.file_url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assert.equal(whole.raw.length, wav.length);
    const part = await owner.request({ method: 'GET', url: one.data.file_url, headers: { range: 'bytes=10-19' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 10-19/${wav.length}`);
    assert.deepEqual(part.raw, wav.subarray(10, 20));
    const suffix = await owner.request({ method: 'GET', url: one.data.file_url, headers: { range: 'bytes=-4' } });
    assert.deepEqual(suffix.raw, wav.subarray(wav.length - 4));
    const outside = await owner.request({ method: 'GET', url: one.data.file_url, headers: { range: `bytes=${wav.length + 5}-` } });
    assert.equal(outside.status, 416);

    const video = await buildZip([{ name: 'v.jsonl', data: jsonl([{ file: 'clip.dat', segments: [[0.5, 1.5, 'action']] }]) }, { name: 'clip.dat', data: mp4File(2, 25) }]);
    const vres = await upload(owner, `/api/projects/${p}/import/jsonl`, video, { modality: 'video' });
    assert.equal(vres.status, 201, JSON.stringify(vres.body));
    const v = (await owner.get(`/api/projects/${p}/samples?modality=video`)).body[0];
    assert.equal(v.data.duration_s, 2);
    assert.equal(v.data.fps, 25);
    assert.equal(v.data.mime_type, 'video/mp4');

    const before = await count(p);
    const missing = await buildZip([{ name: 'x.jsonl', data: jsonl([{ file: 'a/one.wav' }, { file: 'gone.wav' }]) }, { name: 'a/one.wav', data: wavFile(0.5) }]);
    const r1 = await upload(owner, `/api/projects/${p}/import/jsonl`, missing, { modality: 'audio' });
    assert.equal(r1.status, 422);
    assert.match(r1.body.detail[0].msg, /x\.jsonl line 2 .*gone\.wav.*missing/);
    const posing = await buildZip([{ name: 'x.jsonl', data: jsonl([{ file: 'fake.wav' }]) }, { name: 'fake.wav', data: 'RIFX not audio at all, just text' }]);
    const r2 = await upload(owner, `/api/projects/${p}/import/jsonl`, posing, { modality: 'audio' });
    assert.equal(r2.status, 422);
    assert.match(r2.body.detail[0].msg, /fake\.wav.*not an accepted audio file/);
    const outsideClip = await buildZip([{ name: 'x.jsonl', data: jsonl([{ file: 'a.wav', segments: [{ start_s: 0, end_s: 9, label: 'w' }] }]) }, { name: 'a.wav', data: wavFile(0.5) }]);
    assert.equal((await upload(owner, `/api/projects/${p}/import/jsonl`, outsideClip, { modality: 'audio' })).status, 422);
    const noModality = await upload(owner, `/api/projects/${p}/import/jsonl`, zip, {});
    assert.equal(noModality.status, 422);
    assert.equal(await count(p), before);
    const blobs = await t.versa.deps.db.selectFrom('samples').select('blob_key').where('project_id', '=', p).distinct().execute();
    assert.equal(blobs.length, 2, 'identical clips share one blob');
  });

  it('imports LLM records and prepares a hub dataset folder', async () => {
    const p = await project(owner, 'llm');
    const res = await upload(owner, `/api/projects/${p}/import/jsonl`, jsonl([
      { prompt: 'Capital of France?', chosen: 'Paris', rejected: 'Lyon', label: 'geo', split: 'train' },
      { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }], rating: 5, split: 'test' },
    ]), { modality: 'llm' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const list = (await owner.get(`/api/projects/${p}/samples`)).body;
    assert.deepEqual(list[1].value, { rating: 5 });
    const bad = await upload(owner, `/api/projects/${p}/import/jsonl`, jsonl([{ prompt: 'x' }, { chosen: 'only chosen', prompt: 'y' }]), { modality: 'llm' });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.detail[0].loc.at(-1), 2);

    const hub = await owner.post(`/api/projects/${p}/adapters/prepare`, { adapter: 'hub' });
    assert.equal(hub.status, 201, JSON.stringify(hub.body));
    assert.equal(hub.body.files[0].name, 'hub.zip');
    const entries = await zipEntries((await owner.get(hub.body.files[0].url)).raw);
    assert.deepEqual([...entries.keys()].sort(), ['README.md', 'test.jsonl', 'train.jsonl']);
    const readme = entries.get('README.md')!.toString();
    const card = parseYaml(readme.split('---\n')[1]);
    assert.deepEqual(card.dataset_info.splits, [{ name: 'train', num_examples: 1 }, { name: 'test', num_examples: 1 }]);
    assert.deepEqual(card.dataset_info.features.find((f: any) => f.name === 'label').dtype, { class_label: { names: { 0: 'geo' } } });
    const train = JSON.parse(entries.get('train.jsonl')!.toString());
    assert.equal(train.chosen, 'Paris');
    assert.equal(train.label, 0);
    assert.equal((await owner.post(`/api/projects/${p}/adapters/prepare`, { adapter: 'tabular' })).status, 409);
    assert.equal((await owner.post(`/api/projects/${p}/adapters/prepare`, { adapter: 'nope' })).status, 422);
  });

  it('patches labels against the project classes, honours locks and records revisions', async () => {
    const p = await project(owner, 'patch');
    const s = (await owner.post(`/api/projects/${p}/samples`, { modality: 'text', data: { text: 'Ann runs' }, label: 'pos' })).body;
    await owner.post(`/api/projects/${p}/classes`, { name: 'neg' });
    const patched = await owner.patch(`/api/samples/${s.id}`, { label: 'neg', spans: [{ start: 0, end: 3, label: 'pos' }], split: 'valid' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.label, 'neg');
    assert.equal(patched.body.split, 'valid');
    const media = (await owner.post(`/api/projects/${p}/samples`, { modality: 'text', data: { text: 'x' } })).body;
    const segmentOnText = await owner.patch(`/api/samples/${media.id}`, { spans: [{ start_s: 0, end_s: 1, label: 'pos' }] });
    assert.equal(segmentOnText.status, 422, 'time segments are not spans of a text');
    const unknown = await owner.patch(`/api/samples/${s.id}`, { label: 'never-made' });
    assert.equal(unknown.status, 422);
    const outside = await owner.patch(`/api/samples/${s.id}`, { spans: [{ start: 0, end: 99, label: 'pos' }] });
    assert.equal(outside.status, 422);
    assert.equal((await owner.patch(`/api/samples/${s.id}`, {})).status, 422);
    assert.equal((await owner.get(`/api/samples/${s.id}`)).body.label, 'neg', 'bad input changed nothing');

    const annotator = await t.user();
    await owner.post(`/api/projects/${p}/members`, { user_id: annotator.id, role: 'annotator' });
    const viewer = await t.user();
    await owner.post(`/api/projects/${p}/members`, { user_id: viewer.id, role: 'viewer' });
    assert.equal((await viewer.patch(`/api/samples/${s.id}`, { label: 'pos' })).status, 403);
    assert.equal((await annotator.post(`/api/samples/${s.id}/lock`)).status, 200);
    const blocked = await owner.patch(`/api/samples/${s.id}`, { label: 'pos' });
    assert.equal(blocked.status, 409);
    assert.equal(blocked.body.lock.user_id, annotator.id);
    assert.equal((await owner.post(`/api/samples/${s.id}/lock`)).status, 409);
    assert.equal((await annotator.patch(`/api/samples/${s.id}`, { label: 'pos' })).status, 200);
    assert.equal((await annotator.get(`/api/samples/${s.id}/lock`)).body.user_id, annotator.id);
    assert.equal((await owner.delete(`/api/samples/${s.id}/lock?force=true`)).status, 204);
    assert.equal((await owner.get(`/api/samples/${s.id}/lock`)).body, null);
    assert.equal((await owner.patch(`/api/samples/${s.id}`, { label: null, spans: null })).status, 200);

    const revisions = (await owner.get(`/api/samples/${s.id}/revisions`)).body;
    assert.equal(revisions.length, 3);
    assert.deepEqual(revisions[0].before, { label: 'pos', spans: null, value: null, split: null });
    assert.equal(revisions[1].user_id, annotator.id);
    const projectOut = (await owner.get(`/api/projects/${p}`)).body;
    assert.equal(projectOut.labelled_sample_count, 0, 'unlabelling takes the sample off the labelled counter');
    assert.equal((await owner.get(`/api/samples/999999`)).status, 404);
    assert.equal((await owner.get(`/api/samples/${s.id}/file`)).status, 404);
  });

  it('pages with limit/offset/after, X-Total-Count and Link', async () => {
    const p = await project(owner, 'paging');
    await owner.post(`/api/projects/${p}/samples`, { items: Array.from({ length: 25 }, (_, i) => ({ modality: 'text', data: { text: `t${i}` } })) });
    const first = await owner.get(`/api/projects/${p}/samples?limit=10`);
    assert.equal(first.headers['x-total-count'], '25');
    const link = String(first.headers.link);
    assert.match(link, /after=\d+/);
    const next = await owner.get(link.slice(1, link.indexOf('>')));
    assert.equal(next.body[0].data.text, 't10');
    const offset = await owner.get(`/api/projects/${p}/samples?limit=5&offset=20`);
    assert.deepEqual(offset.body.map((s: any) => s.data.text), ['t20', 't21', 't22', 't23', 't24']);
    assert.equal((await owner.get(`/api/projects/${p}/samples?limit=0`)).status, 422);
    assert.equal((await owner.get(`/api/projects/${p}/samples?modality=pictures`)).status, 422);
  });
});
