/// <reference lib="dom" />
/**
 * An annotator's quality-control tasks on tabular and LLM samples on the samples page (issue 29): the tabular ground-
 * truth row dealt to her opens in the lead's table with her own (empty) target, the class she picks is saved to her
 * task, she submits and the next task, an LLM record, opens with the lead's rating and preference controls; her
 * rating and choice are saved to that task. The samples themselves are untouched.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext } from 'playwright-core';
import { apiAccount, livePageSuite, SKIP_REASON, screenshot, until, signPageIn } from './browser-harness.js';
import { withDraws } from '../helpers/random-draws.js';

interface Task { sample_id: number; status: string; label: string | string[] | null; value: unknown }

describe('Quality-control tasks on tabular and LLM samples (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];

  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it('deals a tabular ground-truth row, saves the picked target to the task, submits, and labels the next (LLM) task with rating and preference', async () => {
    const base = live.server.baseUrl;
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Churn', project_type: 'classification' })).id;
    const qc = `/api/projects/${projectId}/quality-control/samples`;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    for (const name of ['stays', 'leaves']) await owner.call('post', `/api/projects/${projectId}/classes`, { name });
    const created = await owner.call<{ items: { id: number }[] }>('post', `/api/projects/${projectId}/samples`, { items: [
      { modality: 'tabular', data: { row: { age: 41, city: 'Oslo' } }, label: 'stays' },
      { modality: 'llm', data: { prompt: 'Name a colour', chosen: 'Blue', rejected: 'Seven' } },
    ] });
    const [g, llm] = created.items.map((s) => s.id);
    await owner.call('post', `/api/samples/${g}/submit`, undefined, 200);
    await owner.call('post', `/api/samples/${g}/review`, { decision: 'approve' }, 200);
    await owner.call('post', `${qc}/ground-truth`, { sample_ids: [g] });
    await owner.call('put', `/api/projects/${projectId}/quality-control/settings`, { overlap: 2, ground_truth_share: 0.5 });
    const samplesBefore = await Promise.all([g, llm].map((id) => owner.call('get', `/api/samples/${id}`)));

    // Ada's first task: the tabular ground truth (drawn first); the page opens it, her oldest open task.
    const first = (await withDraws([0], () => ada.call<{ task: Task }>('post', `${qc}/tasks/next`, undefined, 200))).task;
    assert.equal(first.sample_id, g);
    await signPageIn(live.page, base, ada.email);
    await live.page.goto(`${base}/projects/${projectId}/samples`);
    await live.page.getByTestId('sample-task').waitFor();
    const table = live.page.getByRole('table', { name: 'Tabular samples' });
    await table.getByText('Oslo').waitFor();
    // Her target starts empty (the lead's "stays" is not shown); she picks "leaves".
    const target = live.page.getByLabel(`Target of sample ${g}`);
    assert.equal(await target.inputValue(), '');
    await target.selectOption('leaves');
    await until('the target saved to the task', async () => (await ada.call<Task>('get', `${qc}/tasks/${g}`)).label === 'leaves' || undefined);
    await screenshot(live.page, 'quality-control-sample-task-02-tabular');

    // Submit: the LLM record opens next, with her own empty rating; key 7 rates it, A (Blue) is her preference.
    await live.page.getByTestId('submit-sample-task').click();
    await live.page.getByText('Name a colour').waitFor();
    assert.equal(await table.count(), 0);
    await live.page.keyboard.press('7');
    await live.page.getByRole('button', { name: /Blue/ }).click();
    const saved = await until('the rating and preference saved to the task', async () => {
      const task = await ada.call<Task>('get', `${qc}/tasks/${llm}`);
      const v = task.value as { rating?: number; preference?: string } | null;
      return v?.rating === 7 && v.preference === 'chosen' ? task : undefined;
    });
    assert.deepEqual(saved.value, { rating: 7, preference: 'chosen' });
    await screenshot(live.page, 'quality-control-sample-task-03-llm');
    await live.page.getByTestId('submit-sample-task').click();
    await live.page.getByTestId('no-sample-task').waitFor();

    const done = await ada.call<Task>('get', `${qc}/tasks/${g}`);
    assert.deepEqual([done.status, done.label, done.value], ['submitted', 'leaves', null]);
    assert.equal((await ada.call<Task>('get', `${qc}/tasks/${llm}`)).status, 'submitted');
    // The lead's samples are as they were: the tabular row still "stays", the LLM record unrated.
    assert.deepEqual(await Promise.all([g, llm].map((id) => owner.call('get', `/api/samples/${id}`))), samplesBefore);
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
