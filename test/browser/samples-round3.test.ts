/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiCaller, livePageSuite, SKIP_REASON, screenshot, signInNewUser, until } from './browser-harness.js';

const jsonl = (rows: unknown[]) => Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

/** Issue 30, item 10: a text span can be removed from the list; the tabular view has one "id" column. */
describe('Sample pages, round 3 (issue 30, item 10)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const call = apiCaller(() => live.page, () => live.server.baseUrl);
  let projectId = 0;

  const importFile = async (kind: string, name: string, buffer: Buffer, fields: Record<string, string> = {}) => {
    if (projectId === 0) {
      await signInNewUser(call, 'sam@example.com');
      projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Samples', project_type: 'classification' })).id;
      for (const name of ['PER', 'LOC']) await call('post', `/api/projects/${projectId}/classes`, { name });
    }
    const res = await live.page.request.post(`${live.server.baseUrl}/api/projects/${projectId}/import/${kind}`, { multipart: { ...fields, file: { name, mimeType: 'application/octet-stream', buffer } } });
    assert.equal(res.status(), 201, await res.text());
  };

  it('removes a text span with its Remove button in the span list', async () => {
    const { page, server } = live;
    await importFile('text', 'texts.jsonl', jsonl([{ text: 'Alice lives in Paris' }]));
    const [sample] = await call<{ id: number }[]>('get', `/api/projects/${projectId}/samples?modality=text`);
    const patched = await page.request.patch(`${server.baseUrl}/api/samples/${sample.id}`, { data: { spans: [{ start: 0, end: 5, label: 'PER' }, { start: 15, end: 20, label: 'LOC' }] } });
    assert.equal(patched.status(), 200, await patched.text());
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=text`);
    const spans = page.getByRole('list', { name: 'Spans' });
    await spans.locator('li').nth(1).waitFor();
    await screenshot(page, 'samples-r3-01-spans');
    await spans.getByRole('button', { name: 'Remove span LOC “Paris”' }).click();
    const left = await until('the span removed', async () => {
      const stored = await call<{ spans: { label: string }[] }>('get', `/api/samples/${sample.id}`);
      return stored.spans.length === 1 && stored.spans;
    });
    assert.deepEqual(left.map((s) => s.label), ['PER']);
    assert.equal(await spans.locator('li').count(), 1);
  });

  it('shows a CSV with its own id column under one "id" header', async () => {
    const { page, server } = live;
    await importFile('tabular', 'rows.csv', Buffer.from(['id,x,kind', '101,1,PER', '102,2,LOC'].join('\n')), { target: 'kind' });
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=tabular`);
    await until('rows rendered', async () => (await page.locator('.sample-table-row').count()) === 2);
    const headers = await page.locator('.sample-table-head [role=columnheader]').allInnerTexts();
    assert.equal(headers.filter((h) => h.trim() === 'id').length, 1, headers.join(' | '));
  });

  it('offers a tabular target only the classes for tabular rows (or for every modality), not the text span classes', async () => {
    const { page, server } = live;
    const classes = await call<{ id: number; name: string }[]>('get', `/api/projects/${projectId}/classes`);
    for (const c of classes) {
      const res = await page.request.patch(`${server.baseUrl}/api/classes/${c.id}`, { data: { modalities: ['text'] } });
      assert.equal(res.status(), 200, await res.text());
    }
    await call('post', `/api/projects/${projectId}/classes`, { name: 'bishop', modalities: ['tabular'] });
    await call('post', `/api/projects/${projectId}/classes`, { name: 'other' });
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=tabular`);
    await until('rows rendered', async () => (await page.locator('.sample-table-row').count()) === 2);
    const offered = await page.locator('.sample-table-row').first().locator('select option').allInnerTexts();
    assert.ok(offered.includes('bishop') && offered.includes('other'), offered.join(', '));
    assert.ok(!offered.includes('PER') && !offered.includes('LOC'), offered.join(', '));
    // The text page still offers its span classes, and not the tabular one.
    await page.goto(`${server.baseUrl}/projects/${projectId}/samples?modality=text`);
    await page.getByText(/Keys: 1 PER/).waitFor();
    assert.doesNotMatch(await page.getByText(/Keys: 1 PER/).innerText(), /bishop/);
    assert.deepEqual(live.errors, []);
  });
});
