/// <reference lib="dom" />
/**
 * Sample task reviews in Chromium (issue 29): a reviewer opens Team quality, sees the annotator's submitted sample
 * answers under "Sample task reviews", opens one (the text with her span highlighted and her class), requests changes
 * with a comment and accepts the other; the annotator's samples task mode deals the answer given back first with
 * "Changes requested: …", and her resubmission waits for review again (round 2).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext } from 'playwright-core';
import { apiAccount, livePageSuite, SKIP_REASON, screenshot, until, signPageIn } from './browser-harness.js';

interface Pending { sample_id: number; user_id: number; round: number; last_comment: string | null }
interface Review { sample_id: number; user_id: number; round: number; decision: string; comment: string; reviewed_by: number }

describe('Sample task reviews on the Team quality page (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];
  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it('a reviewer requests changes on a text answer and accepts another; the answer comes back with the comment', async () => {
    const base = live.server.baseUrl;
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const rita = await account('rita@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Reviewed places', project_type: 'classification' })).id;
    const qc = `/api/projects/${projectId}/quality-control/samples`;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: rita.id, role: 'reviewer' });
    for (const name of ['city', 'other']) await owner.call('post', `/api/projects/${projectId}/classes`, { name });
    await owner.call('post', `/api/projects/${projectId}/samples`, { items: [{ modality: 'text', data: { text: 'New York is big' } }, { modality: 'text', data: { text: 'Paris is old' } }] });
    await owner.call('put', `/api/projects/${projectId}/quality-control/settings`, { overlap: 2 });
    // Ada answers and submits both (through the API): a span on the first word and a class.
    const done: number[] = [];
    for (let i = 0; i < 2; i++) {
      const { task } = await ada.call<{ task: { sample_id: number } }>('post', `${qc}/tasks/next`, undefined, 200);
      await ada.call('put', `${qc}/tasks/${task.sample_id}`, { label: 'city', spans: [{ start: 0, end: 3, label: 'city' }] }, 200);
      await ada.call('post', `${qc}/tasks/${task.sample_id}/submit`, undefined, 200);
      done.push(task.sample_id);
    }
    const [first, second] = done;

    // Rita opens Team quality: both answers wait under Sample task reviews.
    await signPageIn(live.page, base, rita.email);
    await live.page.goto(`${base}/projects/${projectId}/quality`);
    const section = live.page.getByRole('region', { name: 'Sample task reviews' });
    await section.getByTestId('task-reviews').waitFor();
    assert.equal(await section.locator('tbody tr').count(), 2);
    await section.locator(`tr[data-sample="${first}"]`).getByTestId('open-task-review').click();
    const view = section.getByTestId('task-review');
    // Her answer: the span highlighted in the text, her class beside it.
    const mark = view.locator('[data-testid="sample-text"] mark');
    await mark.waitFor();
    assert.equal(await view.getAttribute('data-sample'), String(first));
    const text = (await rita.call<{ data: { text: string } }>('get', `/api/samples/${first}`)).data.text;
    assert.equal(await mark.getAttribute('data-start'), '0');
    assert.ok(((await mark.textContent()) ?? '').includes(text.slice(0, 3)), await mark.textContent() ?? '');
    assert.match((await view.getByLabel('Sample label').textContent()) ?? '', /city/);
    assert.ok(await view.getByTestId('request-changes').isDisabled(), 'a change request needs a comment');
    await view.getByLabel('Review comment').fill('The span is the whole name');
    await screenshot(live.page, 'sample-task-review-01-open');
    await view.getByTestId('request-changes').click();
    await section.getByTestId('task-review-done').filter({ hasText: 'changes requested' }).waitFor();
    await until('one left to review', async () => (await section.locator('tbody tr').count()) === 1);
    await section.locator(`tr[data-sample="${second}"]`).getByTestId('open-task-review').click();
    await section.getByTestId('task-review').getByTestId('accept-task').click();
    await section.getByTestId('task-reviews-empty').waitFor();
    const record = await rita.call<Review[]>('get', `${qc}/task-reviews`);
    assert.deepEqual(record.map((r) => [r.sample_id, r.user_id, r.round, r.decision, r.comment, r.reviewed_by]), [
      [first, ada.id, 1, 'changes_requested', 'The span is the whole name', rita.id],
      [second, ada.id, 1, 'accepted', '', rita.id],
    ]);

    // Ada opens her samples: the answer given back is dealt to her with the comment; she resubmits it.
    await signPageIn(live.page, base, ada.email);
    await live.page.goto(`${base}/projects/${projectId}/samples?modality=text`);
    await live.page.getByTestId('sample-task').waitFor();
    const note = live.page.getByTestId('task-review-note');
    await note.waitFor();
    assert.match((await note.textContent()) ?? '', /Changes requested: The span is the whole name/);
    await screenshot(live.page, 'sample-task-review-02-returned');
    await live.page.getByTestId('submit-sample-task').click();
    const pending = await until('the resubmission pending', async () => {
      const list = await rita.call<Pending[]>('get', `${qc}/task-reviews/pending`);
      return list.length === 1 ? list : undefined;
    });
    assert.deepEqual(pending.map((p) => [p.sample_id, p.user_id, p.round, p.last_comment]), [[first, ada.id, 2, 'The span is the whole name']]);
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
