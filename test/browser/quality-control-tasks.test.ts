/// <reference lib="dom" />
/**
 * An annotator's quality-control tasks in the editor (issue 29): in a project that keeps hidden ground truth, the
 * annotate page works on the tasks dealt to the caller. It opens the dealt image with the caller's own version of it
 * (not the image's annotations), saves a box drawn with the box tool to the task, submits it and opens the next
 * task; the image's own annotations (here the hidden reference labels) are untouched.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { apiAccount, livePageSuite, SKIP_REASON, screenshot, until, signPageIn } from './browser-harness.js';
import { withDraws } from '../helpers/random-draws.js';

const box = (class_id: number, x: number, y: number, w: number, h: number) => ({ class_id, annotation_type: 'bbox', geometry: { x, y, width: w, height: h } });
type Shape = ReturnType<typeof box>;
interface Task { image_id: number; status: string; shapes: Shape[] }
interface Ann { id: number; class_id: number; annotation_type: string; geometry: Record<string, number> }

const png = (shade: number) => sharp({ create: { width: 400, height: 300, channels: 3, background: { r: shade, g: 120, b: 200 - shade } } }).png().toBuffer();

/** The page's position of an image point (the editor's view transform). */
function screenOf(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  return page.evaluate(([ix, iy]) => {
    const c = window.__versaEditor!.controller;
    const r = c.canvas.getBoundingClientRect();
    return { x: r.left + c.tx + ix * c.scale, y: r.top + c.ty + iy * c.scale };
  }, [x, y]);
}

describe('Quality-control tasks in the editor (issue 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];

  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it('deals a task, loads its shapes, saves a drawn box to it, submits it and opens the next; the image keeps its annotations', async () => {
    const base = live.server.baseUrl;
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Street scenes' })).id;
    const qc = `/api/projects/${projectId}/quality-control`;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    const car = (await owner.call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'car' })).id;
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await owner.ctx.post(`/api/projects/${projectId}/images`, { multipart: { files: { name: `street-${i}.png`, mimeType: 'image/png', buffer: await png(i * 60) } } });
      assert.equal(res.status(), 201, await res.text());
      ids.push((await res.json()).images[0].id);
    }
    const [g, p1, p2] = ids;
    // Every image has the lead's labels; the first, reviewed and approved, becomes hidden ground truth.
    for (const id of ids) await owner.call('post', `/api/images/${id}/annotations`, box(car, 20, 20, 60, 40));
    const review = await owner.call<{ id: number }>('post', `/api/projects/${projectId}/reviews`, { image_id: g });
    await owner.call('post', `/api/reviews/${review.id}/decide`, { decision: 'approve' }, 200);
    await owner.call('post', `${qc}/ground-truth`, { image_ids: [g] });
    await owner.call('put', `${qc}/settings`, { overlap: 2, ground_truth_share: 0.5 });
    const labelsBefore = new Map<number, Ann[]>();
    for (const id of ids) labelsBefore.set(id, (await owner.call<Ann[]>('get', `/api/images/${id}/annotations`)));

    // Ada's first task is dealt (ground truth, drawn first) and holds one shape of hers, saved through the API.
    const first = (await withDraws([0], () => ada.call<{ task: Task }>('post', `${qc}/tasks/next`, undefined, 200))).task;
    assert.equal(first.image_id, g);
    const mine = box(car, 200, 150, 50, 50);
    await ada.call('put', `${qc}/tasks/${g}`, { shapes: [mine] });

    // She opens the project and its editor: the page opens her open task, with her version (one shape, not the image's).
    await signPageIn(live.page, base, ada.email);
    await live.page.goto(`${base}/projects/${projectId}`);
    await live.page.getByRole('link', { name: 'Annotate' }).click();
    await live.page.waitForURL(/\/annotate/);
    await until('the task open in the editor', () => live.page.evaluate(() => window.__versaEditor?.imageId() ?? undefined).then((id) => id === g));
    await live.page.getByTestId('image-position').filter({ hasText: 'Quality-control task' }).waitFor();
    assert.equal(await live.page.getByTestId('lock-status').count(), 0, 'no lock on a task');
    await until('her one shape', async () => (await live.page.getByTestId('annotation-count').textContent())?.startsWith('1 annotation'));

    // A box with the box tool: the task holds both shapes, the image's annotations are as they were.
    await live.page.locator('[data-tool="box"]').click();
    const from = await screenOf(live.page, 40, 50);
    const to = await screenOf(live.page, 120, 110);
    await live.page.mouse.move(from.x, from.y);
    await live.page.mouse.down();
    await live.page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2);
    await live.page.mouse.move(to.x, to.y);
    await live.page.mouse.up();
    const saved = await until('the box saved to the task', async () => {
      const task = await ada.call<Task>('get', `${qc}/tasks/${g}`);
      return task.shapes.length === 2 ? task : undefined;
    });
    assert.deepEqual(saved.shapes[0], mine);
    const drawn = saved.shapes[1];
    assert.equal(drawn.class_id, car);
    assert.equal(drawn.annotation_type, 'bbox');
    for (const [k, v] of Object.entries({ x: 40, y: 50, width: 80, height: 60 })) {
      assert.ok(Math.abs(drawn.geometry[k as keyof Shape['geometry']] - v) < 2, JSON.stringify(drawn.geometry));
    }
    await screenshot(live.page, 'quality-control-task-01-drawn');

    // Submit: the task is submitted with the box, and the next task (a pool image, with none of her shapes) opens.
    await live.page.getByTestId('submit-task').click();
    const next = await until('the next task open', () => live.page.evaluate(() => window.__versaEditor?.imageId() ?? undefined).then((id) => (id !== g ? id : undefined)));
    assert.ok([p1, p2].includes(next!), `next task ${next}`);
    const tasks = await ada.call<Task[]>('get', `${qc}/tasks`);
    assert.deepEqual(tasks.map((t) => [t.image_id, t.status]), [[g, 'submitted'], [next, 'open']]);
    assert.deepEqual(tasks[0].shapes, saved.shapes);
    await until('the new task shows her (empty) version', async () => (await live.page.getByTestId('annotation-count').textContent())?.startsWith('0 annotations'));
    // The lead's quality report scores the box against the reference.
    const annotators = await owner.call<{ user_id: number; ground_truth: { images: number } }[]>('get', `${qc}/annotators`);
    assert.equal(annotators.find((a) => a.user_id === ada.id)?.ground_truth.images, 1);
    for (const id of ids) assert.deepEqual((await owner.call<Ann[]>('get', `/api/images/${id}/annotations`)), labelsBefore.get(id), `image ${id}`);
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
