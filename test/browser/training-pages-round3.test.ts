/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ppeImage } from '../helpers/ppe.js';
import { apiCaller, livePageSuite, SKIP_REASON, screenshot, signInNewUser, until } from './browser-harness.js';

/** Issue 30, item 10: the training form, the live job line, Compare's numbers, one experiment's page and a way to a new project. */
describe('Training and project pages, round 3 (issue 30, item 10)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const call = apiCaller(() => live.page, () => live.server.baseUrl);
  let projectId = 0;

  const project = async () => {
    if (projectId) return projectId;
    await signInNewUser(call, 'ada@example.com');
    projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Chess' })).id;
    const res = await live.page.request.post(`${live.server.baseUrl}/api/projects/${projectId}/images`, { multipart: { files: { name: 'a.png', mimeType: 'image/png', buffer: await ppeImage(1, { helmet: true, vest: true }) } } });
    assert.equal(res.status(), 201, await res.text());
    await call('post', `/api/projects/${projectId}/versions`, { name: 'first' });
    await until('the version ready', async () => (await call<{ status: string }[]>('get', `/api/projects/${projectId}/versions`)).every((v) => v.status === 'ready'), 30_000);
    return projectId;
  };

  it('the training form labels each parameter in words with the description the API gives, and the job line counts the epoch once', async () => {
    const id = await project();
    const { page, server } = live;
    const adapters = await call<{ name: string; params: Record<string, { description: string }> }[]>('get', '/api/training/adapters');
    // Whether a trainer is installed here does not matter to the form: every adapter is offered as available.
    await page.route('**/api/training/adapters', async (route) => {
      const response = await route.fetch();
      const list = (await response.json()) as { available: boolean }[];
      await route.fulfill({ response, json: list.map((a) => ({ ...a, available: true, reason: null })) });
    });
    const job = { id: 77, experiment_id: 5, adapter: 'versa-detect', status: 'running', progress: 0.02, epoch: 0, epochs: 30, message: 'epoch 1/30', eta_seconds: null, error: null, metrics: {}, project_id: id, version_id: 1, model_id: null, created_at: new Date().toISOString(), started_at: null, finished_at: null };
    await page.route(`**/api/projects/${id}/train`, (route) => route.fulfill({ status: 202, json: job }));
    await page.route('**/api/train/jobs/77', (route) => route.fulfill({ json: job }));
    await page.route('**/api/experiments/5', (route) => route.fulfill({ status: 404, json: { detail: 'not here' } }));
    await page.goto(`${server.baseUrl}/projects/${id}?tab=training`);
    const first = page.locator('.train-dialog [data-param]').first();
    await first.waitFor();
    const name = (await first.getAttribute('data-param'))!;
    const adapter = adapters.find((a) => a.params[name])!;
    const text = await first.innerText();
    assert.ok(text.includes(adapter.params[name].description), `${text} shows the description`);
    assert.ok(!text.startsWith(name) || !name.includes('_'), `${text} names the parameter in words`);
    await screenshot(page, 'training-r3-01-form');
    await page.locator('.train-dialog').getByRole('button', { name: 'Train', exact: true }).click();
    const line = page.getByTestId('epoch-line');
    await until('the job line', async () => (await line.count()) > 0 && (await line.innerText()) !== '');
    assert.equal(await line.innerText(), 'Epoch 1/30');
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  });

  it('Compare prints integers as integers', async () => {
    const id = await project();
    const { page, server } = live;
    const row = (n: number) => ({ id: n, project_id: id, name: `run ${n}`, tags: [], notes: '', status: 'succeeded', adapter: 'versa-detect', version_id: 1, job_id: null, model_id: null, params: { batch: 16 }, metrics: { map50: 0.5 }, best_epoch: 3, epoch: 3, error: null, created_at: new Date().toISOString(), finished_at: null, duration_s: 12 });
    await page.route(`**/api/projects/${id}/experiments?*`, (route) => route.fulfill({ json: [row(1), row(2)] }));
    await page.route('**/api/experiments/compare', (route) => route.fulfill({ json: { experiments: [{ ...row(1), history: [] }, { ...row(2), history: [] }], params: { batch: [16, 32], lr: [0.01, 0.001] }, metrics: { map50: [0.5, 0.61234], epochs_run: [30, 28] } } }));
    await page.goto(`${server.baseUrl}/projects/${id}?tab=experiments`);
    await page.getByLabel('Select experiment 1').check();
    await page.getByLabel('Select experiment 2').check();
    await page.getByRole('button', { name: /Compare/ }).click();
    const view = page.getByRole('region', { name: 'Compare experiments' });
    await view.waitFor();
    const cells = async (label: string) => view.locator('tr').filter({ has: page.locator('td', { hasText: new RegExp(`^${label}$`) }) }).locator('td').allInnerTexts();
    assert.deepEqual(await cells('batch'), ['batch', '16', '32']);
    assert.deepEqual(await cells('epochs_run'), ['epochs_run', '30', '28']);
    assert.deepEqual(await cells('map50'), ['map50', '0.500', '0.612']);
    await screenshot(page, 'training-r3-02-compare');
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  });

  it("an experiment's page shows the per-class table, the confusion matrix with background, and the errors, each opening the editor", async () => {
    const id = await project();
    const { page, server } = live;
    const perClass = (class_id: number, name: string, ap50: number, conf_threshold: number) => ({ class_id, name, instances: 4, ap50, ap50_95: ap50 / 2, precision: 0.8, recall: 0.75, f1: 0.774, conf_threshold, pr_curve: Array.from({ length: 101 }, (_, i) => 1 - i / 200) });
    const split = (ap: number) => ({ per_class: [perClass(1, 'king', ap, 0.41), perClass(2, 'queen', ap / 2, 0.27)], confusion: { labels: ['king', 'queen', 'background'], matrix: [[3, 1, 0], [0, 2, 2], [1, 0, 0]] } });
    const experiment = { id: 5, project_id: id, name: 'run five', tags: [], notes: '', status: 'succeeded', adapter: 'versa-detect', version_id: 1, job_id: null, model_id: null, params: {}, metrics: { map50: 0.62 }, best_epoch: 2, epoch: 2, error: null, created_at: new Date().toISOString(), finished_at: null, duration_s: 9,
      history: [{ epoch: 1, train_loss: 2, map50: 0.3 }, { epoch: 2, train_loss: 1.5, map50: 0.62 }], analysis: { valid: split(0.9), test: split(0.6) } };
    const asked: string[] = [];
    await page.route('**/api/experiments/5', (route) => route.fulfill({ json: experiment }));
    await page.route('**/api/experiments/5/errors?*', (route) => {
      const url = new URL(route.request().url());
      asked.push(`${url.searchParams.get('split')}:${url.searchParams.get('kind') ?? ''}`);
      const image = { image_id: 41, version_image_id: 7, false_positives: 2, false_negatives: 1, confusions: 1, predictions: [] };
      return route.fulfill({ json: { experiment_id: 5, split: url.searchParams.get('split'), kind: url.searchParams.get('kind'), total: 1, images: [image] } });
    });
    await page.goto(`${server.baseUrl}/projects/${id}/experiments/5`);
    const rows = page.getByTestId('per-class').locator('tbody tr');
    await until('the per-class table', async () => (await rows.count()) === 2);
    assert.deepEqual(await rows.nth(0).locator('td').allInnerTexts(), ['king', '4', '0.900', '0.450', '0.800', '0.750', '0.774', '0.410']);
    assert.equal(await page.getByTestId('pr-curves').count(), 1);
    const matrix = page.getByTestId('confusion');
    assert.deepEqual(await matrix.locator('thead th').allInnerTexts(), ['', 'king', 'queen', 'background']);
    assert.deepEqual(await matrix.locator('tbody tr').nth(2).locator('th, td').allInnerTexts(), ['background', '1', '0', '0']);
    await until('the errors of the valid split', async () => asked.includes('valid:'));
    assert.deepEqual(await page.getByTestId('errors').locator('tbody tr td').allInnerTexts(), ['41', '2', '1', '1', 'Open in editor']);
    await page.getByLabel('Split').selectOption('test');
    await until('the test split', async () => (await rows.nth(0).locator('td').nth(2).innerText()) === '0.600');
    await page.getByLabel('Error kind').selectOption('false_positive');
    await until('the errors ranked by false positives', async () => asked.includes('test:false_positive'));
    const open = page.getByRole('link', { name: 'Open in editor' });
    assert.equal(await open.getAttribute('href'), `/projects/${id}/annotate?image=41&experiment=5&eval_split=test`);
    await screenshot(page, 'training-r3-03-experiment');
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  });

  it('a project page offers New project', async () => {
    const id = await project();
    const { page, server } = live;
    await page.goto(`${server.baseUrl}/projects/${id}`);
    await page.getByRole('link', { name: 'New project' }).click();
    await page.waitForURL(/\/projects\/new$/);
    assert.deepEqual(live.errors, []);
  });
});
