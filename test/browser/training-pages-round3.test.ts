/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ppeImage } from '../helpers/ppe.js';
import { apiCaller, livePageSuite, SKIP_REASON, screenshot, signInNewUser, until } from './browser-harness.js';

/** Issue 30, item 10: the training form, the live job line, Compare's numbers and a way to a new project. */
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

  it('a project page offers New project', async () => {
    const id = await project();
    const { page, server } = live;
    await page.goto(`${server.baseUrl}/projects/${id}`);
    await page.getByRole('link', { name: 'New project' }).click();
    await page.waitForURL(/\/projects\/new$/);
    assert.deepEqual(live.errors, []);
  });
});
