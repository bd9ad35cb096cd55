/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ppeImage } from '../helpers/ppe.js';
import { apiCaller, livePageSuite, SKIP_REASON, screenshot, signInNewUser, until } from './browser-harness.js';

/** Issue 30, item 9: the Pipelines tab, round 3. */
describe('Pipelines tab, round 3 (issue 30)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const call = apiCaller(() => live.page, () => live.server.baseUrl);
  let projectId = 0;

  const open = async () => {
    const { page, server } = live;
    if (projectId === 0) {
      await signInNewUser(call, 'ada@example.com');
      projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Chess' })).id;
      for (let i = 0; i < 3; i++) {
        const res = await page.request.post(`${server.baseUrl}/api/projects/${projectId}/images`, { multipart: { files: { name: `p${i}.png`, mimeType: 'image/png', buffer: await ppeImage(i, { helmet: true, vest: true }) } } });
        assert.equal(res.status(), 201, await res.text());
      }
      const [first] = await call<{ id: number }[]>('get', `/api/projects/${projectId}/images?limit=1`);
      const cls = await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'pawn' });
      await call('post', `/api/images/${first.id}/annotations`, { class_id: cls.id, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } });
    }
    await page.goto(`${server.baseUrl}/projects/${projectId}?tab=pipelines`);
  };

  it('"New pipeline" offers a blank definition and the examples, those that do not validate on this project saying why', async () => {
    await open();
    const { page } = live;
    await page.getByRole('button', { name: 'New pipeline' }).click();
    const starts = page.getByTestId('pipeline-starts');
    await starts.waitFor();
    // No detector in this project: the protective-equipment example says so and cannot be picked.
    const ppe = starts.locator('li').filter({ hasText: 'Protective equipment check' });
    assert.equal(await ppe.getByRole('button').isDisabled(), true);
    assert.match(await ppe.innerText(), /Not for this project: .+/);
    assert.equal(await starts.locator('[data-start=blank] button').isEnabled(), true);
    await screenshot(page, 'pipelines-r3-01-starts');
    await starts.locator('[data-start=blank] button').click();
    await page.locator('[data-testid=pipelines] tbody tr').filter({ hasText: 'New pipeline' }).waitFor();
    await until('the blank graph', async () => (await page.locator('[data-testid=step-graph] [data-node]').count()) === 1);
  });

  it('draws the graph from the editor as it is typed, and names the allowed values of an enum', async () => {
    const { page } = live;
    const editor = page.locator('[data-testid=yaml-editor] .cm-content');
    await until('YAML in the editor', async () => (await editor.innerText()).includes('select_images'));
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText([
      'name: Two steps',
      'steps:',
      '  - id: select',
      '    type: select_images',
      '    params:',
      '      splits: [training]',
      '  - id: check',
      '    type: quality',
      '    needs: [select]',
      '',
    ].join('\n'));
    // Not saved: the graph follows the text.
    await until('two nodes and an arrow', async () =>
      (await page.locator('[data-testid=step-graph] [data-node]').evaluateAll((els) => els.map((e) => e.getAttribute('data-node')))).join() === 'select,check'
      && (await page.locator('[data-testid=step-graph] line').count()) === 1);
    const problem = await until('the enum problem', async () => {
      const shown = await page.getByTestId('pipeline-problems').innerText();
      return shown.includes('splits') ? shown : undefined;
    });
    assert.match(problem, /steps\[0\]\.params\.splits\[0\] must be one of train, valid, test, none/);
    await screenshot(page, 'pipelines-r3-02-live-graph');
  });

  it('keeps an export after a selection to the selected images', async () => {
    await open();
    const { page } = live;
    await page.getByRole('button', { name: 'New pipeline' }).click();
    const example = page.getByTestId('pipeline-starts').locator('li').filter({ hasText: 'Export annotated images' }).getByRole('button');
    await until('the example checked', async () => await example.isEnabled());
    await example.click();
    await page.locator('[data-testid=pipelines] tbody tr.selected').filter({ hasText: 'Export annotated images' }).waitFor();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const row = page.locator('[data-testid=pipeline-runs] tbody tr').first();
    await until('the run to succeed', async () => (await row.innerText()).includes('succeeded'), 30_000);
    const outputs = await page.locator('[data-testid=run-steps] tr[data-step=export] pre').innerText();
    assert.match(outputs, /"image_count": 1\b/, 'one of the three images is annotated');
  });

  it('says what a queued run waits for', async () => {
    const { page, server } = live;
    // A job that holds the queue's only slot until released.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    server.versa.deps.queue.register('test.hold', async () => {
      await held;
      return {};
    });
    const blocker = await server.versa.deps.queue.enqueue('test.hold', {}, { projectId });
    try {
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const waiting = await until('the waiting text', async () => {
        const el = page.getByTestId('run-waiting').first();
        return (await el.count()) > 0 ? el.innerText() : undefined;
      });
      assert.match(waiting, new RegExp(`Waiting for 1 job ahead of it: test\\.hold #${blocker.id} \\(running\\)`));
      await screenshot(page, 'pipelines-r3-03-queued');
    } finally {
      release();
    }
    const row = page.locator('[data-testid=pipeline-runs] tbody tr').first();
    await until('the run to succeed', async () => (await row.innerText()).includes('succeeded'), 30_000);
    assert.equal(await page.getByTestId('run-waiting').count(), 0);
    assert.deepEqual(live.errors, []);
  });
});
