/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { PPE_CLASSES, ppeImage } from '../helpers/ppe.js';
import { closeLivePage, openLivePage, SKIP_REASON, screenshot, until, type Browser, type LiveServer } from './browser-harness.js';

describe('Pipelines tab in Chromium', { skip: SKIP_REASON ?? false }, () => {
  let server: LiveServer;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    ({ server, browser, page } = await openLivePage(errors));
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });
  });
  after(async () => {
    await closeLivePage({ browser, server });
  });

  it('lists pipelines, edits YAML with errors at their lines, draws the steps, runs and shows the run per step', async () => {
    const base = server.baseUrl;
    const post = async <T>(url: string, data: unknown, status = 201): Promise<T> => {
      const res = await page.request.post(base + url, { data: data as object });
      assert.equal(res.status(), status, `${url}: ${await res.text()}`);
      return (await res.json()) as T;
    };
    await post('/api/auth/register', { email: 'ada@example.com', password: 'correct horse battery' });
    await post('/api/auth/login', { email: 'ada@example.com', password: 'correct horse battery' }, 200);
    const { id: projectId } = await post<{ id: number }>('/api/projects', { name: 'Site' });
    const model = await page.request.post(`${base}/api/projects/${projectId}/models/upload`, {
      multipart: { file: { name: 'ppe.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from(buildYoloModel('v8', undefined, PPE_CLASSES)) } },
    });
    assert.equal(model.status(), 201, await model.text());
    for (const [i, wears] of [{ helmet: true, vest: true }, { helmet: true, vest: false }].entries()) {
      const res = await page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: `p${i}.png`, mimeType: 'image/png', buffer: await ppeImage(i, wears) } } });
      assert.equal(res.status(), 201, await res.text());
    }

    await page.goto(`${base}/projects/${projectId}?tab=pipelines`);
    await page.getByText('No pipelines yet.').waitFor();
    await page.getByRole('button', { name: 'New pipeline' }).click();
    // The project has a detector with the classes: the protective-equipment example validates on it.
    const example = page.getByTestId('pipeline-starts').locator('li').filter({ hasText: 'Protective equipment check' }).getByRole('button');
    await until('the example checked', async () => await example.isEnabled());
    await example.click();
    await page.locator('[data-testid=pipelines] tbody tr').filter({ hasText: 'Protective equipment check' }).waitFor();

    // The editor shows the YAML; the graph one node per step, with arrows for the needs.
    const editor = page.locator('[data-testid=yaml-editor] .cm-content');
    await until('YAML in the editor', async () => (await editor.innerText()).includes('type: select_images'));
    const nodes = await page.locator('[data-testid=step-graph] [data-node]').evaluateAll((els) => els.map((e) => e.getAttribute('data-node')));
    assert.deepEqual(nodes, ['select', 'detect', 'ppe_rule', 'flag', 'report']);
    assert.equal(await page.locator('[data-testid=step-graph] line').count(), 4);
    await until('no problems', async () => (await page.getByTestId('pipeline-problems').innerText()).includes('No problems found'));
    await screenshot(page, 'pipelines-01-example');

    // An unknown step type: the error is listed with its line and marked in the lint gutter.
    const lines = await page.locator('[data-testid=yaml-editor] .cm-line').allInnerTexts();
    const lineOfSelect = lines.findIndex((l) => l.includes('type: select_images')) + 1;
    await page.locator('[data-testid=yaml-editor] .cm-line').nth(lineOfSelect - 1).click();
    await page.keyboard.press('End');
    await page.keyboard.type('_typo');
    const problem = await until('a problem at the line', async () => {
      const shown = await page.getByTestId('pipeline-problems').innerText();
      return shown.includes('unknown step type') ? shown : undefined;
    });
    assert.match(problem, new RegExp(`line ${lineOfSelect}: steps\\[0\\]\\.type unknown step type 'select_images_typo'`));
    await page.locator('.cm-lint-marker-error').first().waitFor();
    await screenshot(page, 'pipelines-02-error');

    // Undo the typo, run, and read the run's steps.
    for (let i = 0; i < 5; i++) await page.keyboard.press('Backspace');
    await until('the typo gone', async () => (await page.locator('[data-testid=yaml-editor] .cm-line').nth(lineOfSelect - 1).innerText()).endsWith('select_images')).catch(async (e) => {
      throw new Error(`${e}: ${await page.locator('[data-testid=yaml-editor] .cm-line').nth(lineOfSelect - 1).innerText()}`);
    });
    await until('valid again', async () => (await page.getByTestId('pipeline-problems').innerText()).includes('No problems found'));
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const row = page.locator('[data-testid=pipeline-runs] tbody tr').first();
    await until('the run to succeed', async () => (await row.innerText()).includes('succeeded'), 30_000);
    const steps = page.getByTestId('run-steps');
    await steps.waitFor();
    const statuses = await steps.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-step'), r.children[2].textContent]));
    assert.deepEqual(statuses, [['select', 'succeeded'], ['detect', 'succeeded'], ['ppe_rule', 'succeeded'], ['flag', 'succeeded'], ['report', 'succeeded']]);
    const flagOutputs = await steps.locator('tr[data-step=flag] pre').innerText();
    assert.match(flagOutputs, /"flagged": 1/);
    assert.match(await steps.innerText(), /Written by this run: 1 review/);
    await screenshot(page, 'pipelines-03-run');
    assert.deepEqual(errors, []);
  });
});
