import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { pythonPath, TRAINER_DIR } from '../../src/training/python.js';

/** Class names a spreadsheet would read as formulas, beside plain ones. */
const CLASSES = ['=up', '+down', '-flat', '@x', 'plain', 'other'];
/** A category feature with formula-like values too: it carries the label, so a changed value would cost accuracy. */
const SHADES = ['=a', '+b', '-c', '@d', 'e', 'f'];

/** `x` in [0, 1) picks the class by sixths; `shade` repeats it; 50 rows per class, in a fixed order. */
function table(): string {
  const rows = [['x', 'shade', 'label']];
  for (let i = 0; i < 300; i++) {
    const c = i % 6;
    const x = (c + ((i * 7919) % 97) / 100) / 6;
    rows.push([x.toFixed(4), SHADES[c], CLASSES[c]]);
  }
  return rows.map((r) => r.map((cell) => (/[",]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(',')).join('\n') + '\n';
}

/**
 * Labels and cells that start with `=`, `+`, `-` or `@` reach the tabular trainer as they are (formula neutralisation
 * is for spreadsheet exports only), so every class is trained and evaluated; before, the prepared CSVs held `'=up`
 * while schema.json held `=up`, the trainer dropped those rows and reported 1.0 on what was left.
 */
describe('tabular training with formula-like class names', { timeout: 5 * 60_000 }, () => {
  let t: TestApp;
  let owner: Client;

  before(async () => {
    t = await startTestApp();
    await t.user();
    owner = await t.user();
  });
  after(() => t.close());

  const waitJob = async (jobId: number) => {
    const deadline = Date.now() + 4 * 60_000;
    for (;;) {
      const res = await owner.get(`/api/train/jobs/${jobId}`);
      if (['succeeded', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status}`);
      await sleep(200);
    }
  };

  it('trains and evaluates every class, and prepares the CSVs with the labels unchanged', async () => {
    const project = (await owner.post('/api/projects', { name: 'formulas', project_type: 'classification' })).body.id as number;
    const { payload, headers } = multipart([{ name: 'file', filename: 'table.csv', data: Buffer.from(table()), contentType: 'text/csv' }], { target: 'label' });
    const imported = await owner.request({ method: 'POST', url: `/api/projects/${project}/import/tabular`, payload, headers });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const split = await owner.post(`/api/projects/${project}/samples/splits`, { train: 60, valid: 20, test: 20, strategy: 'stratified', seed: 1 });
    assert.equal(split.status, 200, JSON.stringify(split.body));

    const prepared = await owner.post(`/api/projects/${project}/adapters/prepare`, { adapter: 'tabular' });
    assert.equal(prepared.status, 201, JSON.stringify(prepared.body));
    const trainCsv = (await owner.get(prepared.body.files.find((f: any) => f.name === 'train.csv').url)).raw.toString('utf8');
    const lines = trainCsv.trim().split('\n').slice(1);
    assert.deepEqual([...new Set(lines.map((l) => l.split(',')[2]))].sort(), [...CLASSES].sort(), 'labels are written as the schema names them');
    assert.deepEqual([...new Set(lines.map((l) => l.split(',')[1]))].sort(), [...SHADES].sort(), 'feature cells are written as imported');

    const started = await owner.post(`/api/projects/${project}/adapters/train`, { adapter: 'tabular', epochs: 60, seed: 2 });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const job = await waitJob(started.body.id);
    assert.equal(job.status, 'succeeded', job.error);

    const experiment = (await owner.get(`/api/experiments/${started.body.experiment_id}`)).body;
    assert.deepEqual(experiment.per_class.map((c: any) => c.name).sort(), [...CLASSES].sort());
    for (const c of experiment.per_class) assert.ok(c.instances > 0, `${c.name} is evaluated (${c.instances} rows)`);
    assert.equal(experiment.confusion.length, CLASSES.length);
    const evaluated = experiment.confusion.reduce((n: number, row: number[]) => n + row.reduce((a, b) => a + b, 0), 0);
    assert.equal(evaluated, split.body.valid, 'every valid row is in the confusion matrix');
    assert.ok(experiment.metrics.accuracy >= 0.9, `accuracy ${experiment.metrics.accuracy}`);
    const model = (await owner.get(`/api/projects/${project}/models`)).body[0];
    assert.deepEqual([...model.class_names].sort(), [...CLASSES].sort());
  });
});

/** The trainer run directly: a label its schema does not name fails the run with the label named, dropping nothing. */
describe('tabular trainer: labels outside the schema', { timeout: 2 * 60_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-tabular-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('emits an error event naming the unknown labels and exits non-zero, with no final event', async () => {
    const data = join(dir, 'data');
    await mkdir(data);
    const rows = Array.from({ length: 40 }, (_, i) => `${i / 40},${i % 2 ? 'odd' : i % 4 ? "'=even" : 'even'}`);
    await writeFile(join(data, 'train.csv'), ['n,parity', ...rows].join('\n') + '\n');
    await writeFile(join(data, 'valid.csv'), 'n,parity\n0.5,odd\n0.25,\'+half\n');
    await writeFile(join(data, 'test.csv'), 'n,parity\n');
    await writeFile(join(data, 'schema.json'), JSON.stringify({ target: 'parity', task: 'classification', columns: { n: 'number', parity: 'category' }, classes: ['odd', 'even'] }));
    const config = join(dir, 'run.json');
    await writeFile(config, JSON.stringify({ data_dir: data, out_dir: join(dir, 'out'), epochs: 5 }));

    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(pythonPath(), [join(TRAINER_DIR, 'versa_tabular.py'), '--config', config], (err, stdout) => resolve({ code: err ? (err as any).code : 0, stdout }));
    });
    assert.notEqual(result.code, 0);
    const events = result.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.equal(events.some((e) => e.event === 'finished'), false);
    const error = events.find((e) => e.event === 'failed');
    assert.ok(error, result.stdout);
    assert.match(error.message, /'=even/);
    assert.match(error.message, /'\+half/);
    assert.match(error.message, /train: 10 rows/);
  });
});
