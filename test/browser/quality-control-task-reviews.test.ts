/// <reference lib="dom" />
/**
 * Task reviews in Chromium (issue 29): a reviewer opens the Team quality page, sees the annotator's submitted tasks
 * under "Task reviews", opens one (the annotator's version over the image), requests changes with a comment and
 * accepts the other; the annotator's editor deals the task given back first with the comment shown, and her
 * resubmission from the editor waits for review again (round 2).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext } from 'playwright-core';
import sharp from 'sharp';
import { apiAccount, livePageSuite, SKIP_REASON, screenshot, until, signPageIn } from './browser-harness.js';

const box = (class_id: number, x: number, y: number, w: number, h: number) => ({ class_id, annotation_type: 'bbox', geometry: { x, y, width: w, height: h } });
interface Pending { task_id: number; image_id: number; user_id: number; round: number; last_comment: string | null }
interface Review { image_id: number; user_id: number; round: number; decision: string; comment: string; reviewed_by: number }

const png = (shade: number) => sharp({ create: { width: 400, height: 300, channels: 3, background: { r: shade, g: 120, b: 200 - shade } } }).png().toBuffer();

describe('Task reviews on the Team quality page (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];
  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it('a reviewer requests changes and accepts; the task comes back to the annotator with the comment', async () => {
    const base = live.server.baseUrl;
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const rita = await account('rita@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Reviewed streets' })).id;
    const qc = `/api/projects/${projectId}/quality-control`;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: rita.id, role: 'reviewer' });
    const car = (await owner.call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'car' })).id;
    for (let i = 0; i < 2; i++) {
      const res = await owner.ctx.post(`/api/projects/${projectId}/images`, { multipart: { files: { name: `street-${i}.png`, mimeType: 'image/png', buffer: await png(i * 90) } } });
      assert.equal(res.status(), 201, await res.text());
    }
    await owner.call('put', `${qc}/settings`, { overlap: 2 });
    // Ada labels and submits both images (through the API).
    const done: number[] = [];
    for (let i = 0; i < 2; i++) {
      const { task } = await ada.call<{ task: { image_id: number } }>('post', `${qc}/tasks/next`, undefined, 200);
      await ada.call('put', `${qc}/tasks/${task.image_id}`, { shapes: [box(car, 40 + i * 100, 60, 80, 50)] }, 200);
      await ada.call('post', `${qc}/tasks/${task.image_id}/submit`, undefined, 200);
      done.push(task.image_id);
    }
    const [first, second] = done;

    // Rita, a reviewer, opens Team quality: both submissions wait under Task reviews.
    await signPageIn(live.page, base, rita.email);
    await live.page.goto(`${base}/projects/${projectId}/quality`);
    const section = live.page.getByRole('region', { name: 'Task reviews' });
    await section.getByTestId('task-reviews').waitFor();
    assert.equal(await section.locator('tbody tr').count(), 2);
    await section.locator(`tr[data-image="${first}"]`).getByTestId('open-task-review').click();
    const view = section.getByTestId('task-review');
    await view.locator('figure.annotated-image').waitFor();
    assert.equal(await view.getAttribute('data-image'), String(first));
    assert.ok(await view.getByTestId('request-changes').isDisabled(), 'a change request needs a comment');
    await view.getByLabel('Review comment').fill('The car is wider than that');
    await screenshot(live.page, 'task-review-01-open');
    await view.getByTestId('request-changes').click();
    await section.getByTestId('task-review-done').filter({ hasText: 'changes requested' }).waitFor();
    await until('one left to review', async () => (await section.locator('tbody tr').count()) === 1);

    await section.locator(`tr[data-image="${second}"]`).getByTestId('open-task-review').click();
    await section.getByTestId('task-review').getByTestId('accept-task').click();
    await section.getByTestId('task-reviews-empty').waitFor();
    const record = await rita.call<Review[]>('get', `${qc}/task-reviews`);
    assert.deepEqual(record.map((r) => [r.image_id, r.user_id, r.round, r.decision, r.comment, r.reviewed_by]), [
      [first, ada.id, 1, 'changes_requested', 'The car is wider than that', rita.id],
      [second, ada.id, 1, 'accepted', '', rita.id],
    ]);

    // Ada opens the editor: the task given back is dealt to her, with the comment; she resubmits it.
    await signPageIn(live.page, base, ada.email);
    await live.page.goto(`${base}/projects/${projectId}/annotate`);
    await until('the returned task open', () => live.page.evaluate(() => window.__versaEditor?.imageId() ?? undefined).then((id) => id === first));
    const note = live.page.getByTestId('task-review-note');
    await note.waitFor();
    assert.match((await note.textContent()) ?? '', /Changes requested: The car is wider than that/);
    await screenshot(live.page, 'task-review-02-returned');
    await live.page.getByTestId('submit-task').click();
    const pending = await until('the resubmission pending', async () => {
      const list = await rita.call<Pending[]>('get', `${qc}/task-reviews/pending`);
      return list.length === 1 ? list : undefined;
    });
    assert.deepEqual(pending.map((p) => [p.image_id, p.user_id, p.round, p.last_comment]), [[first, ada.id, 2, 'The car is wider than that']]);
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
