import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

/** A seeded generator (mulberry32): the same tables on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const csv = (rows: (string | number)[][]) => rows.map((r) => r.join(',')).join('\n') + '\n';

/** A learnable classification table: `label` is `high` exactly when x > 0.5; `noise` and `color` carry nothing. */
function classificationTable(rows: number): string {
  const next = random(11);
  const colors = ['red', 'green', 'blue'];
  return csv([
    ['x', 'noise', 'color', 'label'],
    ...Array.from({ length: rows }, () => {
      const x = next();
      return [x.toFixed(4), next().toFixed(4), colors[Math.floor(next() * 3)], x > 0.5 ? 'high' : 'low'];
    }),
  ]);
}

/** A learnable regression table: y = 3a + 2b + 1 (a number target, so the import makes it a regression). */
function regressionTable(rows: number): string {
  const next = random(23);
  return csv([
    ['a', 'b', 'y'],
    ...Array.from({ length: rows }, () => {
      const a = next();
      const b = next();
      return [a.toFixed(4), b.toFixed(4), (3 * a + 2 * b + 1).toFixed(4)];
    }),
  ]);
}

/**
 * `POST /api/projects/{id}/adapters/train` for real: tabular samples imported over HTTP, stratified splits, the
 * tabular adapter (scikit-learn) run as the trainer's child process, the experiment and the registered model.
 */
describe('adapters/train (tabular)', { timeout: 5 * 60_000 }, () => {
  let t: TestApp;
  let owner: Client & { id: number };
  let viewer: Client & { id: number };
  let stranger: Client;

  const createProject = async (name: string) => {
    const res = await owner.post('/api/projects', { name, project_type: 'classification' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as number;
  };

  const importTable = async (projectId: number, data: string, target: string) => {
    const { payload, headers } = multipart([{ name: 'file', filename: 'table.csv', data: Buffer.from(data), contentType: 'text/csv' }], { target });
    const res = await owner.request({ method: 'POST', url: `/api/projects/${projectId}/import/tabular`, payload, headers });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };

  const split = async (projectId: number) => {
    const res = await owner.post(`/api/projects/${projectId}/samples/splits`, { train: 70, valid: 15, test: 15, strategy: 'stratified', seed: 3 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  const waitJob = async (jobId: number) => {
    const deadline = Date.now() + 4 * 60_000;
    for (;;) {
      const res = await owner.get(`/api/train/jobs/${jobId}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      if (['succeeded', 'failed', 'cancelled'].includes(res.body.status)) return res.body;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status}`);
      await sleep(200);
    }
  };

  const dataFolders = () => {
    const dir = join(t.dataDir, 'training', 'data');
    return existsSync(dir) ? readdirSync(dir) : [];
  };

  before(async () => {
    t = await startTestApp();
    await t.user(); // instance admin
    owner = await t.user();
    viewer = await t.user();
    stranger = await t.user();
  });
  after(() => t.close());

  it('runs where scikit-learn is installed (the tabular adapter is available)', async () => {
    const adapters = (await owner.get('/api/training/adapters')).body as any[];
    const tabular = adapters.find((a) => a.name === 'tabular');
    assert.equal(tabular.available, true, tabular.reason);
    assert.deepEqual(Object.keys(tabular.params).sort(), ['epochs', 'lr', 'max_depth', 'seed']);
  });

  it('trains a classifier on the samples: job, experiment with valid and test metrics, registered model', async () => {
    const projectId = await createProject('churn');
    const imported = await importTable(projectId, classificationTable(300), 'label');
    assert.equal(imported.created, 300);
    const counts = await split(projectId);

    const started = await owner.post(`/api/projects/${projectId}/adapters/train`, { adapter: 'tabular', name: 'threshold', epochs: 60, max_depth: 3, seed: 5 });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.adapter, 'tabular');
    assert.equal(started.body.kind, 'train');
    assert.equal(started.body.project_id, projectId);
    assert.equal(started.body.version_id, null);
    assert.equal(started.body.epochs, 60);
    assert.ok(['queued', 'running'].includes(started.body.status), started.body.status);

    const job = await waitJob(started.body.id);
    assert.equal(job.status, 'succeeded', job.error);
    assert.ok(job.metrics.test_accuracy >= 0.9, `test accuracy ${job.metrics.test_accuracy}`);
    assert.ok(job.model_id > 0);
    assert.equal(job.progress, 1);

    const experiment = (await owner.get(`/api/experiments/${started.body.experiment_id}`)).body;
    assert.equal(experiment.status, 'succeeded');
    assert.equal(experiment.adapter, 'tabular');
    assert.equal(experiment.job_id, started.body.id);
    assert.equal(experiment.model_id, job.model_id);
    assert.match(experiment.name, /^threshold #\d+$/);
    assert.deepEqual(experiment.params, {
      model: 'hist-gradient-boosting', epochs: 60, lr: 0.1, max_depth: 3, seed: 5, require_ready: true, min_readiness_score: 60,
    });
    assert.deepEqual(Object.keys(experiment.metrics).sort(), ['accuracy', 'f1', 'test_accuracy', 'test_f1']);
    for (const name of ['accuracy', 'f1', 'test_accuracy', 'test_f1']) assert.ok(experiment.metrics[name] >= 0.9, `${name} ${experiment.metrics[name]}`);
    assert.equal(experiment.history.length, 1);
    assert.equal(experiment.artifacts.model, 'weights/model.pkl');
    assert.ok(experiment.environment.sklearn, 'the scikit-learn version is recorded');
    assert.deepEqual(experiment.recipe, {
      data: 'tabular samples', target: 'label', task: 'classification', classes: ['high', 'low'], splits: { train: counts.train, valid: counts.valid, test: counts.test },
    });

    const models = await owner.get(`/api/projects/${projectId}/models`);
    assert.equal(models.status, 200);
    assert.equal(models.body.length, 1);
    const [model] = models.body;
    assert.equal(model.id, job.model_id);
    assert.equal(model.experiment_id, experiment.id);
    assert.equal(model.task, 'tabular');
    assert.equal(model.format, 'other');
    assert.equal(model.lifecycle, 'development');
    assert.equal(model.source, 'training_run');
    assert.deepEqual(model.class_names, ['high', 'low']);
    assert.equal(model.metrics.test_accuracy, experiment.metrics.test_accuracy);

    const status = (await owner.get(`/api/projects/${projectId}/train/status`)).body;
    assert.equal(status.status, 'latest');
    assert.equal(status.job.experiment_id, experiment.id);
    assert.deepEqual(dataFolders(), [], 'the run\'s data folder is removed when the job ends');
  });

  it('trains a regressor: rmse and r2 on valid and test', async () => {
    const projectId = await createProject('prices');
    await importTable(projectId, regressionTable(400), 'y');
    await split(projectId);
    const started = await owner.post(`/api/projects/${projectId}/adapters/train`, { adapter: 'tabular', lr: 0.2 });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const job = await waitJob(started.body.id);
    assert.equal(job.status, 'succeeded', job.error);
    const experiment = (await owner.get(`/api/experiments/${started.body.experiment_id}`)).body;
    assert.deepEqual(Object.keys(experiment.metrics).sort(), ['r2', 'rmse', 'test_r2', 'test_rmse']);
    assert.ok(experiment.metrics.r2 > 0.8 && experiment.metrics.test_r2 > 0.8, JSON.stringify(experiment.metrics));
    assert.ok(experiment.metrics.test_rmse < 0.5, JSON.stringify(experiment.metrics));
    assert.equal(experiment.params.lr, 0.2);
    assert.equal(experiment.params.max_depth, null);
    assert.equal(experiment.params.epochs, 100);
    assert.equal(experiment.recipe.task, 'regression');
    const models = (await owner.get(`/api/projects/${projectId}/models`)).body;
    assert.deepEqual(models.map((m: any) => [m.id, m.task, m.class_names]), [[job.model_id, 'tabular', []]]);
    assert.deepEqual(dataFolders(), []);
  });

  it('refuses, starting nothing: 401, 404 for a foreign project, 403 for a viewer, 422 for a bad body, 409 from the gate', async () => {
    const projectId = await createProject('guarded');
    await importTable(projectId, classificationTable(60), 'label');
    await split(projectId);
    await owner.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' });
    const url = `/api/projects/${projectId}/adapters/train`;

    assert.equal((await t.client().post(url, { adapter: 'tabular' })).status, 401);
    assert.equal((await stranger.post(url, { adapter: 'tabular' })).status, 404);
    assert.equal((await owner.post('/api/projects/2000000000/adapters/train', { adapter: 'tabular' })).status, 404);
    const denied = await viewer.post(url, { adapter: 'tabular' });
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    for (const bad of [{ adapter: 'nope' }, {}, { adapter: 'versa-detect' }, { adapter: 'tabular', epochs: 0 }, { adapter: 'tabular', lr: 2 }, { adapter: 'tabular', max_depth: 0 }, { adapter: 'tabular', name: ' ' }]) {
      const res = await owner.post(url, bad);
      assert.equal(res.status, 422, `${JSON.stringify(bad)}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body.detail));
    }
    const unknown = await owner.post(url, { adapter: 'nope' });
    assert.deepEqual(unknown.body.detail[0].loc, ['body', 'adapter']);

    // No tabular samples: the gate answers 409 with the readiness report and its blockers.
    const empty = await createProject('no samples');
    const gated = await owner.post(`/api/projects/${empty}/adapters/train`, { adapter: 'tabular' });
    assert.equal(gated.status, 409, JSON.stringify(gated.body));
    assert.equal(gated.body.readiness.adapter, 'tabular');
    assert.equal(gated.body.readiness.ready, false);
    assert.ok(gated.body.readiness.blockers.some((b: string) => /has none|no tabular|trains on tabular samples/i.test(b)), gated.body.readiness.blockers.join('; '));
    assert.match(gated.body.detail, /not ready to train/);
    // Without the gate, still 409: there is nothing to train on.
    const ungated = await owner.post(`/api/projects/${empty}/adapters/train`, { adapter: 'tabular', require_ready: false });
    assert.equal(ungated.status, 409);
    assert.match(ungated.body.detail, /no tabular samples/);
    assert.equal(ungated.body.readiness, undefined);
    // A stricter threshold than the project reaches: 409 too.
    const strict = await createProject('unlabelled');
    const rows = Array.from({ length: 40 }, (_, i) => [i, i % 4 === 0 ? '' : i % 2 ? 'odd' : 'even']);
    await importTable(strict, csv([['n', 'parity'], ...rows]), 'parity');
    await split(strict);
    const below = await owner.post(`/api/projects/${strict}/adapters/train`, { adapter: 'tabular', min_readiness_score: 100 });
    assert.equal(below.status, 409, JSON.stringify(below.body));
    assert.ok(below.body.readiness.score < 100);
    assert.equal(below.body.readiness.threshold, 100);

    // Samples in no split pass the readiness check (a split is pending) but a run needs a valid split: 409.
    const unsplit = await createProject('unsplit');
    await importTable(unsplit, classificationTable(50), 'label');
    const noValid = await owner.post(`/api/projects/${unsplit}/adapters/train`, { adapter: 'tabular' });
    assert.equal(noValid.status, 409, JSON.stringify(noValid.body));
    assert.match(noValid.body.detail, /valid split has no tabular samples/);

    for (const id of [projectId, empty, strict, unsplit]) {
      assert.deepEqual((await owner.get(`/api/projects/${id}/experiments`)).body, [], `no experiment in project ${id}`);
      assert.equal((await owner.get(`/api/projects/${id}/train/status`)).body.status, 'idle');
    }
    assert.deepEqual(dataFolders(), []);
  });
});
