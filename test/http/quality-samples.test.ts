import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { wavFile } from '../helpers/media-fixtures.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { createProject, smoothImage, uploadImages } from '../helpers/version-fixtures.js';
import { buildZip } from '../helpers/zip-build.js';

function upload(client: Client, url: string, data: Buffer | string, fields: Record<string, string> = {}, filename = 'data.bin') {
  const { payload, headers } = multipart([{ name: 'file', filename, data: Buffer.isBuffer(data) ? data : Buffer.from(data) }], fields);
  return client.request({ method: 'POST', url, payload, headers });
}

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const csv = (rows: unknown[][]) => rows.map((r) => r.map((c) => (c === null ? '' : String(c))).join(',')).join('\n') + '\n';
const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

const TEXTS: { text: string; label?: string }[] = [
  { text: 'The delivery arrived on time and the box was intact.', label: 'pos' },
  { text: '   ' },
  { text: 'Terrible support, I waited weeks for any answer at all.', label: 'neg' },
  { text: 'Great value for the price, would buy again.', label: 'pos' },
  { text: '  great value for the PRICE,   would buy again. ', label: 'pos' },
  { text: 'Contact me at jane.doe@example.com about the refund.', label: 'neg' },
  { text: 'Call me on +33 6 12 34 56 78 before the weekend.', label: 'neutral' },
  { text: 'The colour is exactly as shown in the pictures.', label: 'pos' },
  { text: 'Stopped working after a few days of light use.', label: 'neg' },
  { text: 'Fits well and feels sturdy, happy with it so far.', label: 'pos' },
  { text: 'The manual is confusing and the setup took an hour.', label: 'neg' },
  { text: 'Nice design although the cable could be longer.', label: 'pos' },
  { text: 'Excellent sound for such a small speaker, really.', label: 'pos' },
  { text: `${'This review goes on and on about every little detail of the product. '.repeat(40)}`, label: 'pos' },
];

const LLM = [
  { prompt: 'Summarise the report.', response: 'Sales grew in every region.' },
  { prompt: 'Translate hello into French.', response: '   ' },
  { prompt: 'Pick the better answer.', chosen: 'Answer A is concise.', rejected: '' },
  { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: '' }] },
  { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'bye' }] },
  { prompt: 'Who do I write to?', response: 'Write to bob@example.org with the order number.' },
  { prompt: 'Only a prompt, no answer yet.' },
];

/** Customers: age, plan, monthly fee, outcome; rows 4 and 13 lack the age, the last two repeat rows 2 and 7. */
const CUSTOMERS: [number | null, string, number, string][] = [
  [34, 'basic', 19.5, 'stay'],
  [45, 'pro', 49.9, 'leave'],
  [29, 'max', 99.0, 'stay'],
  [null, 'basic', 21.5, 'leave'],
  [52, 'pro', 45.25, 'stay'],
  [34, 'max', 89.9, 'leave'],
  [41, 'basic', 18.75, 'stay'],
  [29, 'pro', 52.1, 'leave'],
  [38, 'max', 95.5, 'stay'],
  [45, 'basic', 22.4, 'stay'],
  [60, 'pro', 47.3, 'leave'],
  [23, 'max', 91.2, 'stay'],
  [null, 'pro', 55.55, 'stay'],
  [47, 'basic', 17.9, 'leave'],
  [38, 'pro', 44.4, 'leave'],
  [29, 'basic', 23.3, 'stay'],
  [55, 'max', 97.7, 'leave'],
  [41, 'pro', 48.8, 'leave'],
  [33, 'basic', 20.2, 'stay'],
  [27, 'max', 93.3, 'stay'],
  [50, 'pro', 46.6, 'stay'],
  [36, 'basic', 24.4, 'leave'],
];
const ROWS = [...CUSTOMERS, CUSTOMERS[1], CUSTOMERS[6]];
/** customer_id is an identifier, country constant, outcome_copy the target again. */
const CUSTOMERS_CSV = csv([
  ['customer_id', 'country', 'age', 'plan', 'outcome_copy', 'monthly', 'outcome'],
  ...ROWS.map(([age, plan, monthly, outcome], i) => [1001 + i, 'FR', age, plan, outcome, monthly, outcome]),
]);

describe('quality of samples', () => {
  let t: TestApp;
  let owner: Client & { token: string };
  let stranger: Client;
  let textProject: number;
  let tableProject: number;
  /** Sample ids of the text project by text (then LLM records by index) and of the tabular project by row. */
  let textIds: number[];
  let llmIds: number[];
  let rowIds: number[];

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    stranger = await t.user();
    textProject = await createProject(owner, 'reviews');
    let res = await upload(owner, `/api/projects/${textProject}/import/text`, jsonl(TEXTS));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    res = await upload(owner, `/api/projects/${textProject}/import/jsonl`, jsonl(LLM), { modality: 'llm' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const samples = (await owner.get(`/api/projects/${textProject}/samples?limit=1000`)).body as { id: number; modality: string }[];
    textIds = samples.filter((s) => s.modality === 'text').map((s) => s.id);
    llmIds = samples.filter((s) => s.modality === 'llm').map((s) => s.id);
    assert.equal(textIds.length, TEXTS.length);
    assert.equal(llmIds.length, LLM.length);

    tableProject = await createProject(owner, 'customers');
    res = await upload(owner, `/api/projects/${tableProject}/import/tabular`, CUSTOMERS_CSV, { target: 'outcome' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.task, 'classification');
    rowIds = ((await owner.get(`/api/projects/${tableProject}/samples?limit=1000`)).body as { id: number }[]).map((s) => s.id);
    assert.equal(rowIds.length, ROWS.length);
  });
  after(() => t.close());

  const check = (report: any, id: string) => {
    const found = report.checks.find((c: any) => c.id === id);
    assert.ok(found, `check ${id} in ${report.checks.map((c: any) => c.id).join(', ')}`);
    return found;
  };

  it('lists each sample modality\'s checks in the catalog', async () => {
    const ids = async (modality: string) => (await owner.get(`/api/quality/checks?modality=${modality}`)).body.map((c: any) => c.id);
    assert.deepEqual(await ids('text'), ['text_empty', 'text_duplicates', 'text_length_outliers', 'text_label_imbalance', 'text_personal_data']);
    assert.deepEqual(await ids('tabular'), [
      'tabular_missing_values', 'tabular_constant_columns', 'tabular_id_columns', 'tabular_target_leakage', 'tabular_duplicate_rows', 'tabular_label_imbalance', 'tabular_personal_data',
    ]);
    assert.deepEqual(await ids('llm'), ['llm_empty_responses', 'llm_label_imbalance', 'llm_personal_data']);
    assert.deepEqual(await ids('audio'), ['audio_label_imbalance']);
    const all = (await owner.get('/api/quality/checks')).body;
    assert.equal(new Set(all.map((c: any) => c.id)).size, all.length, 'ids are unique across modalities');
    const outliers = all.find((c: any) => c.id === 'text_length_outliers');
    assert.equal(outliers.modality, 'text');
    assert.equal(outliers.params.threshold.default, 3.5);
  });

  it('finds exactly the planted problems of the text and LLM samples', async () => {
    const res = await owner.get(`/api/projects/${textProject}/quality`);
    assert.equal(res.status, 200);
    const report = res.body;
    // No images: only the text and LLM checks run.
    assert.deepEqual(new Set(report.checks.map((c: any) => c.modality)), new Set(['text', 'llm']));
    assert.equal(report.checks.find((c: any) => c.id === 'blurry'), undefined);
    assert.deepEqual(check(report, 'text_empty').sample_ids, [textIds[1]]);
    const duplicates = check(report, 'text_duplicates');
    assert.deepEqual(duplicates.sample_ids, [textIds[4]]);
    assert.equal(duplicates.items[0].detail, `Same text as sample ${textIds[3]}`);
    const personal = check(report, 'text_personal_data');
    assert.deepEqual(sorted(personal.sample_ids), [textIds[5], textIds[6]]);
    assert.deepEqual(personal.items.map((i: any) => i.detail).sort(), ['Contains a phone number', 'Contains an e-mail address']);
    assert.deepEqual(check(report, 'text_length_outliers').sample_ids, [textIds[13]]);
    assert.match(check(report, 'text_length_outliers').items[0].detail, /long, robust z/);
    assert.equal(check(report, 'text_label_imbalance').count, 0);

    const empty = check(report, 'llm_empty_responses');
    assert.deepEqual(empty.sample_ids, [llmIds[1], llmIds[2], llmIds[3]]);
    assert.deepEqual(empty.items.map((i: any) => i.detail), [
      'The record has an empty response',
      'The record has an empty rejected response',
      'The record has an empty last assistant turn',
    ]);
    assert.deepEqual(check(report, 'llm_personal_data').sample_ids, [llmIds[5]]);
    // 1 empty text, 1 copy, 2 with personal data, 3 empty responses, 1 LLM e-mail: 8 of 21 records (the outlier is info).
    assert.equal(report.score, Math.round(100 * (1 - 8 / 21)));
    assert.equal(report.features.computed, 0);
  });

  it('takes the sample checks\' parameters and refuses checks the project cannot run', async () => {
    const res = await owner.post(`/api/projects/${textProject}/quality`, { checks: ['text_label_imbalance', 'text_personal_data'], params: { text_label_imbalance: { max_ratio: 3 }, text_personal_data: { email: false } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.checks.map((c: any) => c.id), ['text_label_imbalance', 'text_personal_data']);
    const imbalance = res.body.checks[0];
    assert.equal(imbalance.count, 1);
    assert.match(imbalance.items[0].detail, /^neutral: 1 sample, 8\.0× fewer than pos \(8\)$/);
    assert.deepEqual(res.body.checks[1].sample_ids, [textIds[6]]);

    const image = await owner.post(`/api/projects/${textProject}/quality`, { checks: ['blurry'] });
    assert.equal(image.status, 422);
    assert.match(image.body.detail[0].msg, /valid: .*text_empty.*llm_empty_responses/);
    assert.doesNotMatch(image.body.detail[0].msg, /tabular_/);
    const range = await owner.post(`/api/projects/${textProject}/quality`, { params: { text_length_outliers: { threshold: 0 } } });
    assert.equal(range.status, 422);
    assert.deepEqual(range.body.detail[0].loc, ['body', 'params', 'text_length_outliers', 'threshold']);
  });

  it('finds exactly the planted problems of the tabular samples', async () => {
    const report = (await owner.get(`/api/projects/${tableProject}/quality`)).body;
    assert.ok(report.checks.every((c: any) => c.modality === 'tabular'));
    const missing = check(report, 'tabular_missing_values');
    assert.deepEqual(sorted(missing.sample_ids), [rowIds[3], rowIds[12]]);
    assert.equal(missing.items[0].detail, 'Missing "age"');
    assert.deepEqual(check(report, 'tabular_constant_columns').items.map((i: any) => i.detail), ['"country" is "FR" in every row']);
    assert.deepEqual(check(report, 'tabular_id_columns').items.map((i: any) => i.detail), ['"customer_id": 24 distinct integer values, one per row (an identifier, not a feature)']);
    assert.deepEqual(check(report, 'tabular_target_leakage').items.map((i: any) => i.detail), ['"outcome_copy" equals the target "outcome" in every row']);
    const duplicates = check(report, 'tabular_duplicate_rows');
    assert.deepEqual(duplicates.sample_ids, [rowIds[22], rowIds[23]]);
    assert.deepEqual(duplicates.items.map((i: any) => i.detail), [`Same features as sample ${rowIds[1]}`, `Same features as sample ${rowIds[6]}`]);
    assert.equal(check(report, 'tabular_label_imbalance').count, 0);
    assert.equal(check(report, 'tabular_personal_data').count, 0);
    assert.equal(report.score, Math.round(100 * (1 - 4 / 24)));
  });

  it('profiles the samples: modalities, splits, classes, text lengths and tabular columns', async () => {
    const res = await owner.get(`/api/projects/${textProject}/profile`);
    assert.equal(res.status, 200);
    const p = res.body;
    assert.equal(p.modality, 'text');
    assert.equal(p.totals.images, 0);
    const s = p.samples;
    assert.equal(s.total, 21);
    assert.equal(s.labelled, 13);
    assert.deepEqual(s.splits, { train: 0, valid: 0, test: 0, unassigned: 21 });
    assert.deepEqual(s.modalities.map((m: any) => [m.modality, m.samples, m.labelled]), [['text', 14, 13], ['llm', 7, 0]]);
    assert.deepEqual(s.labels.map((l: any) => [l.modality, l.name, l.samples, l.by_split.unassigned]), [['text', 'pos', 8, 8], ['text', 'neg', 4, 4], ['text', 'neutral', 1, 1]]);
    const text = s.lengths.find((l: any) => l.modality === 'text');
    const lengths = TEXTS.map((x) => x.text.length).sort((a, b) => a - b);
    assert.equal(text.samples, 14);
    assert.equal(text.min, 3);
    assert.equal(text.max, lengths[13]);
    assert.equal(text.median, (lengths[6] + lengths[7]) / 2);
    assert.equal(text.histogram.reduce((n: number, b: any) => n + b.samples, 0), 14);
    const llm = s.lengths.find((l: any) => l.modality === 'llm');
    assert.equal(llm.samples, 7);
    assert.equal(llm.min, 'hi'.length + ''.length);
    assert.equal(s.tabular, null);

    const table = (await owner.get(`/api/projects/${tableProject}/profile`)).body;
    assert.equal(table.modality, 'tabular');
    const t2 = table.samples.tabular;
    assert.equal(t2.target, 'outcome');
    assert.equal(t2.task, 'classification');
    assert.equal(t2.rows, 24);
    const col = (name: string) => t2.columns.find((c: any) => c.name === name);
    assert.deepEqual(t2.columns.map((c: any) => c.name), ['customer_id', 'country', 'age', 'plan', 'outcome_copy', 'monthly', 'outcome']);
    assert.deepEqual({ type: col('age').type, missing: col('age').missing, min: col('age').min, max: col('age').max }, { type: 'integer', missing: 2, min: 23, max: 60 });
    assert.equal(col('customer_id').distinct, 24);
    assert.deepEqual(col('country').top_values, [{ value: 'FR', samples: 24 }]);
    assert.deepEqual(col('outcome').top_values, [{ value: 'stay', samples: 13 }, { value: 'leave', samples: 11 }]);
    assert.equal(col('outcome').target, true);
    const monthly = ROWS.map((r) => r[2]);
    assert.ok(Math.abs(col('monthly').mean - monthly.reduce((a, b) => a + b, 0) / monthly.length) < 1e-9);
    assert.deepEqual(table.samples.labels.map((l: any) => [l.name, l.samples]), [['stay', 13], ['leave', 11]]);

    assert.equal((await stranger.get(`/api/projects/${tableProject}/profile`)).status, 404);
  });

  it('readiness for the tabular adapter: ready on a good set, blocked without a target or with one class', async () => {
    const readiness = (projectId: number, body: unknown = {}) => owner.post(`/api/projects/${projectId}/readiness`, body);
    // No images, tabular samples: the tabular adapter is the default. No split yet: pending, not blocking.
    let res = await readiness(tableProject);
    assert.equal(res.status, 200);
    assert.equal(res.body.adapter, 'tabular');
    assert.deepEqual(res.body.blockers, []);
    assert.match(res.body.checks.find((c: any) => c.id === 'valid_split').message, /24 tabular samples in no split yet/);
    const split = await owner.post(`/api/projects/${tableProject}/samples/splits`, { train: 70, valid: 15, test: 15 });
    assert.equal(split.status, 200, JSON.stringify(split.body));
    res = await readiness(tableProject, { adapter: 'tabular' });
    assert.equal(res.body.ready, true);
    assert.equal(res.body.score, 100);
    assert.equal(res.body.checks.reduce((n: number, c: any) => n + c.weight, 0), 100);
    assert.match(res.body.checks.find((c: any) => c.id === 'has_target').message, /Target "outcome" \(classification\) on 24 of 24 samples/);
    res = await readiness(tableProject, { adapter: 'tabular', config: { min_samples_per_class: 12 } });
    assert.equal(res.body.ready, false);
    assert.deepEqual(res.body.blockers, ['Fewer than 12 samples: leave']);

    // Rows without a target column (created one by one): blocked.
    const noTarget = await createProject(owner, 'no target');
    const rows = Array.from({ length: 12 }, (_, i) => ({ modality: 'tabular', data: { row: { a: i, b: i % 3 } } }));
    assert.equal((await owner.post(`/api/projects/${noTarget}/samples`, { items: rows })).status, 201);
    res = await readiness(noTarget, { adapter: 'tabular' });
    assert.equal(res.body.ready, false);
    assert.ok(res.body.blockers.some((b: string) => /No target column/.test(b)), res.body.blockers.join('; '));

    // A target with one class: blocked.
    const oneClass = await createProject(owner, 'one class');
    const upload1 = await upload(owner, `/api/projects/${oneClass}/import/tabular`, csv([['x', 'y'], ...Array.from({ length: 15 }, (_, i) => [i, 'same'])]), { target: 'y' });
    assert.equal(upload1.status, 201, JSON.stringify(upload1.body));
    res = await readiness(oneClass);
    assert.equal(res.body.adapter, 'tabular');
    assert.equal(res.body.ready, false);
    assert.ok(res.body.blockers.includes('1 class in use (at least 2 needed)'), res.body.blockers.join('; '));

    // An image project asked about the tabular adapter: no tabular samples.
    const images = await createProject(owner, 'images only');
    res = await readiness(images, { adapter: 'tabular' });
    assert.ok(res.body.blockers.includes('The tabular adapter trains on tabular samples; this project has none'));

    // The text adapter reads the labels of text samples.
    res = await readiness(textProject);
    assert.equal(res.body.adapter, 'text');
    assert.deepEqual(res.body.blockers, ['Fewer than 10 samples: neg, neutral, pos']);
  });

  it('streams every sample as a canonical record after the images, and ?split= keeps one split', async () => {
    const raw = async (projectId: number, query = '') => {
      const res = await t.app.inject({ method: 'GET', url: `/api/projects/${projectId}/canonical${query}`, headers: { authorization: `Bearer ${owner.token}` } });
      assert.equal(res.statusCode, 200);
      return res.body.trim() === '' ? [] : res.body.trim().split('\n').map((l) => JSON.parse(l));
    };
    const records = await raw(textProject);
    assert.equal(records.length, 21);
    assert.deepEqual(records.map((r: any) => r.id), [...textIds, ...llmIds].map((id) => `sample:${id}`));
    const first = records[0];
    assert.deepEqual(Object.keys(first).sort(), ['annotations', 'id', 'label', 'media', 'metadata', 'modality', 'spans', 'split', 'value']);
    assert.deepEqual(first.media, { text: TEXTS[0].text });
    assert.equal(first.modality, 'text');
    assert.equal(first.label, 'pos');
    assert.deepEqual(first.spans, []);
    assert.deepEqual(first.annotations, []);
    assert.equal(first.value, null);
    assert.equal(first.metadata.sample_id, textIds[0]);
    const llm = records[TEXTS.length + 2];
    assert.deepEqual(llm.media, { prompt: 'Pick the better answer.', chosen: 'Answer A is concise.', rejected: '' });
    assert.equal(llm.spans, null);

    // The tabular project was split above: ?split=valid keeps exactly its valid samples.
    const valid = ((await owner.get(`/api/projects/${tableProject}/samples?split=valid&limit=1000`)).body as { id: number }[]).map((s) => `sample:${s.id}`);
    assert.ok(valid.length > 0);
    const validRecords = await raw(tableProject, '?split=valid');
    assert.deepEqual(validRecords.map((r: any) => r.id), valid);
    assert.ok(validRecords.every((r: any) => r.split === 'valid' && r.modality === 'tabular'));
    const row = (await raw(tableProject)).find((r: any) => r.id === `sample:${rowIds[0]}`);
    assert.deepEqual(row.media, { row: { customer_id: 1001, country: 'FR', age: 34, plan: 'basic', outcome_copy: 'stay', monthly: 19.5 } });
    assert.equal(row.label, 'stay');
    const json = await owner.get(`/api/projects/${tableProject}/canonical?format=json&split=valid`);
    assert.deepEqual(json.body.map((r: any) => r.id), valid);
  });

  it('a project with images and samples: the image checks and the samples\' both run, images come first in the export', async () => {
    const mixed = await createProject(owner, 'mixed');
    const [image] = await uploadImages(owner, mixed, [{ name: 'one.jpg', data: await smoothImage(1) }]);
    const wav = wavFile(1);
    const zip = await buildZip([
      { name: 'clips.jsonl', data: jsonl([{ file: 'one.wav', label: 'speech', segments: [{ start_s: 0.1, end_s: 0.6, label: 'word' }], transcript: 'hello', split: 'train' }]) },
      { name: 'one.wav', data: wav },
    ]);
    const res = await upload(owner, `/api/projects/${mixed}/import/jsonl`, zip, { modality: 'audio' }, 'clips.zip');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const clip = (await owner.get(`/api/projects/${mixed}/samples`)).body[0];

    const report = (await owner.get(`/api/projects/${mixed}/quality`)).body;
    const modalities = new Set(report.checks.map((c: any) => c.modality));
    assert.deepEqual(modalities, new Set(['image', 'audio']));
    assert.equal(check(report, 'unannotated_images').count, 1);
    assert.equal(report.score, 50);

    const records = await t.app.inject({ method: 'GET', url: `/api/projects/${mixed}/canonical`, headers: { authorization: `Bearer ${owner.token}` } });
    const lines = records.body.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((r: any) => r.id), [`image:${image.id}`, `sample:${clip.id}`]);
    const audio = lines[1];
    assert.equal(audio.modality, 'audio');
    assert.equal(audio.split, 'train');
    assert.equal(audio.media.uri, `/api/samples/${clip.id}/file`);
    assert.equal(audio.media.mime_type, 'audio/wav');
    assert.equal(audio.media.duration_s, 1);
    assert.match(audio.media.sha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(audio.annotations, [{ label: 'word', type: 'segment', geometry: { start_s: 0.1, end_s: 0.6 } }]);
    assert.equal(audio.label, 'speech');
    assert.equal(audio.value, 'hello');
    assert.equal((await owner.get(audio.media.uri)).status, 200);

    const profile = (await owner.get(`/api/projects/${mixed}/profile`)).body;
    assert.equal(profile.modality, 'image');
    assert.equal(profile.totals.images, 1);
    assert.deepEqual(profile.samples.modalities.map((m: any) => m.modality), ['audio']);
    assert.deepEqual(profile.samples.splits, { train: 1, valid: 0, test: 0, unassigned: 0 });
  });

  it('documents sample records in the canonical schema', async () => {
    const doc = (await t.client().get('/openapi.json')).body;
    const schema = doc.paths['/api/projects/{id}/canonical'].get.responses['200'].content['application/x-ndjson'].schema;
    const text = JSON.stringify(schema);
    for (const name of ['TextMedia', 'RowMedia', 'LlmMedia', 'SegmentAnnotation', 'duration_s']) assert.ok(text.includes(name), name);
    const item = doc.paths['/api/projects/{id}/quality'].get.responses['200'].content['application/json'].schema.properties.checks.items;
    assert.ok(item.properties.sample_ids && item.properties.modality);
    const profile = doc.paths['/api/projects/{id}/profile'].get.responses['200'].content['application/json'].schema;
    assert.ok(profile.properties.samples.properties.tabular);
  });

  it('401 and 404 on the sample projects', async () => {
    for (const url of [`/api/projects/${tableProject}/quality`, `/api/projects/${tableProject}/profile`, `/api/projects/${tableProject}/canonical`]) {
      assert.equal((await t.client().get(url)).status, 401);
      assert.equal((await stranger.get(url)).status, 404);
    }
    assert.equal((await stranger.post(`/api/projects/${tableProject}/readiness`, { adapter: 'tabular' })).status, 404);
  });
});
