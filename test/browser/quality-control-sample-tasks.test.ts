/// <reference lib="dom" />
/**
 * An annotator's quality-control tasks on the samples page (issue 29): in a project that keeps a ground-truth sample,
 * the page opens the text sample dealt to her with her own answer (not the sample's label), saves a span and a class
 * set from the keyboard to the task, submits it and opens the next task; the sample's own label is untouched.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext } from 'playwright-core';
import { apiAccount, livePageSuite, SKIP_REASON, screenshot, until, signPageIn } from './browser-harness.js';
import { withDraws } from '../helpers/random-draws.js';

interface Task { sample_id: number; status: string; label: string | null; spans: unknown[] | null }
interface Sample { id: number; label: string | null; spans: unknown[] | null; review_state: string }

describe('Quality-control tasks on the samples page (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];

  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it('deals a text-sample task, saves a span and a class set in the page to it, submits it and opens the next; the sample keeps its label', async () => {
    const base = live.server.baseUrl;
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Places', project_type: 'classification' })).id;
    const qc = `/api/projects/${projectId}/quality-control/samples`;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    for (const name of ['city', 'other']) await owner.call('post', `/api/projects/${projectId}/classes`, { name });
    const created = await owner.call<{ items: { id: number }[] }>('post', `/api/projects/${projectId}/samples`, { items: [
      { modality: 'text', data: { text: 'New York is big' }, label: 'city', spans: [{ start: 0, end: 8, label: 'city' }] },
      { modality: 'text', data: { text: 'first pool text' } },
      { modality: 'text', data: { text: 'second pool text' } },
    ] });
    const [g, p1, p2] = created.items.map((s) => s.id);
    // The first, reviewed and approved, becomes hidden ground truth.
    await owner.call('post', `/api/samples/${g}/submit`, undefined, 200);
    await owner.call('post', `/api/samples/${g}/review`, { decision: 'approve' }, 200);
    await owner.call('post', `${qc}/ground-truth`, { sample_ids: [g] });
    await owner.call('put', `/api/projects/${projectId}/quality-control/settings`, { overlap: 2, ground_truth_share: 0.5 });
    const truthBefore = await owner.call<Sample>('get', `/api/samples/${g}`);

    // Ada's first task is dealt (ground truth, drawn first); the page opens it, her oldest open task.
    const first = (await withDraws([0], () => ada.call<{ task: Task }>('post', `${qc}/tasks/next`, undefined, 200))).task;
    assert.equal(first.sample_id, g);
    await signPageIn(live.page, base, ada.email);
    await live.page.goto(`${base}/projects/${projectId}/samples?modality=text`);
    await live.page.getByTestId('sample-task').waitFor();
    await live.page.getByTestId('sample-text').getByText('New York is big').waitFor();
    // Her version: no class, no spans (the sample's reference label is not shown).
    await live.page.getByText('No label — press 1–9').waitFor();

    // "New York" selected, key 1: a span of city; then key 2 with nothing selected: her class is "other".
    await live.page.evaluate(() => {
      const node = document.querySelector('[data-testid="sample-text"] [data-start="0"]')!.firstChild!;
      const range = document.createRange();
      range.setStart(node, 0);
      range.setEnd(node, 8);
      window.getSelection()!.removeAllRanges();
      window.getSelection()!.addRange(range);
    });
    await live.page.keyboard.press('1');
    await live.page.locator('[data-testid="sample-text"] mark', { hasText: 'New York' }).waitFor();
    await live.page.keyboard.press('2');
    const saved = await until('the answer saved to the task', async () => {
      const task = await ada.call<Task>('get', `${qc}/tasks/${g}`);
      return task.label === 'other' && task.spans?.length === 1 ? task : undefined;
    });
    assert.deepEqual(saved.spans, [{ start: 0, end: 8, label: 'city' }]);
    await screenshot(live.page, 'quality-control-sample-task-01-labelled');

    // Submit: the task is submitted with her answer, and the next task (a pool sample) opens.
    await live.page.getByTestId('submit-sample-task').click();
    await until('the next task open', async () => {
      const text = await live.page.getByTestId('sample-text').textContent().catch(() => '');
      return text?.includes('pool text') || undefined;
    });
    const done = await ada.call<Task>('get', `${qc}/tasks/${g}`);
    assert.deepEqual([done.status, done.label, done.spans], ['submitted', 'other', [{ start: 0, end: 8, label: 'city' }]]);
    const next = (await ada.call<{ task: Task }>('post', `${qc}/tasks/next`, undefined, 200)).task;
    assert.ok([p1, p2].includes(next.sample_id), `next task ${next.sample_id}`);
    assert.equal(await live.page.getByTestId('sample-text').getByText(next.sample_id === p1 ? 'first pool text' : 'second pool text').count(), 1);
    // The sample's own label, spans and review are as they were.
    assert.deepEqual(await owner.call<Sample>('get', `/api/samples/${g}`), truthBefore);
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
