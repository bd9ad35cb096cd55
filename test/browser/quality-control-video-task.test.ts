/// <reference lib="dom" />
/**
 * A quality-control task on a video's frames in the editor (issues 26 and 29): the annotator dealt a frame works
 * through the video's frames of their task set on the timeline (scrub, frame step, play), draws a box and propagates
 * it forward as a track, moves it on a frame between (a keyframe there) — a track of their task, saved to their tasks' frames only (the video's tracks and the
 * frames' annotations untouched), interpolated on the frames between — and submits the set; the lead reviews the set
 * as one item on the Team quality page, steps through its frames and gives the whole set back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type APIRequestContext } from 'playwright-core';
import { apiAccount, livePageSuite, SKIP_REASON, screenshot, until, signPageIn } from './browser-harness.js';
import { testVideo } from '../helpers/video-fixtures.js';

interface Shape { class_id: number; annotation_type: string; geometry: Record<string, number>; track_id?: number; keyframe?: boolean }
interface Task { image_id: number; frame: number | null; status: string; shapes: Shape[] }
interface Frame { id: number; frame: number }

describe('a quality-control task on video frames in the editor (issues 26, 29)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const sessions: APIRequestContext[] = [];
  const account = (email: string) => apiAccount(live.server.baseUrl, sessions, email);

  it('moves the timeline over the task set, saves a propagated box as a task track only, submits the set', async () => {
    const base = live.server.baseUrl;
    const page = live.page;
    await account('admin@example.com');
    const owner = await account('lead@example.com');
    const ada = await account('ada@example.com');
    const projectId = (await owner.call<{ id: number }>('post', '/api/projects', { name: 'Traffic video' })).id;
    const qc = `/api/projects/${projectId}/quality-control`;
    await owner.call('post', `/api/projects/${projectId}/members`, { user_id: ada.id, role: 'annotator' });
    const car = (await owner.call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'car' })).id;
    const res = await owner.ctx.post(`/api/projects/${projectId}/videos`, { multipart: { file: { name: 'traffic.mp4', mimeType: 'video/mp4', buffer: testVideo({ size: '320x240', rate: 10, seconds: 1 }) } } });
    assert.equal(res.status(), 202, await res.text());
    const videoId = (await res.json()).id as number;
    await until('the frames decoded', async () => (await owner.call<{ status: string }>('get', `/api/videos/${videoId}`)).status === 'ready', 60_000);
    const frames = (await owner.call<Frame[]>('get', `/api/projects/${projectId}/images?video_id=${videoId}&limit=100`)).sort((a, b) => a.frame - b.frame);
    assert.equal(frames.length, 10);
    await owner.call('put', `${qc}/settings`, { overlap: 2 });

    // Ada opens the editor: her task is a frame of the video, and the timeline holds her task set's ten frames.
    await signPageIn(page, base, ada.email);
    await page.goto(`${base}/projects/${projectId}/annotate`);
    await page.getByTestId('image-position').filter({ hasText: 'Quality-control task' }).waitFor();
    await page.getByTestId('timeline').waitFor();
    const openFrame = () => page.evaluate(() => window.__versaEditor?.imageId() ?? null).then((id) => frames.find((f) => f.id === id)?.frame ?? null);
    await until('a frame of the task open', async () => (await openFrame()) !== null);
    await until('the task set on the timeline', async () => / \/ 10$/.test(await page.getByTestId('frame-position').innerText()));

    // Scrubbing to the start, then stepping by key: the timeline moves.
    await page.getByLabel('Frame', { exact: true }).fill('0');
    await until('frame 0 open', async () => (await openFrame()) === 0);
    await page.getByLabel('Frame', { exact: true }).blur(); // the frame keys work off the scrubber
    await page.keyboard.press('.');
    await until('frame 1 open', async () => (await openFrame()) === 1);
    assert.match(await page.getByTestId('frame-position').innerText(), /Frame 1 · 2 \/ 10/);
    await page.keyboard.press(',');
    await until('frame 0 open again', async () => (await openFrame()) === 0);

    // A box drawn on frame 0 and propagated 8 frames on: a track of her task with keyframes on frames 0 and 8.
    await page.locator('[data-tool="box"]').click();
    const screenOf = (x: number, y: number) => page.evaluate(([ix, iy]) => {
      const c = window.__versaEditor!.controller;
      const r = c.canvas.getBoundingClientRect();
      return { x: r.left + c.tx + ix * c.scale, y: r.top + c.ty + iy * c.scale };
    }, [x, y]);
    const from = await screenOf(40, 50);
    const to = await screenOf(120, 110);
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2);
    await page.mouse.move(to.x, to.y);
    await page.mouse.up();
    await until('the box saved to the task', async () => (await ada.call<Task>('get', `${qc}/tasks/${frames[0].id}`)).shapes.length === 1);
    await page.keyboard.press('v');
    const centre = await screenOf(80, 80);
    await page.mouse.click(centre.x, centre.y);
    await page.getByLabel('Frames to propagate').fill('8');
    await page.getByRole('button', { name: 'Propagate forward' }).click();
    await page.locator('.banner', { hasText: 'Propagated to frame 8' }).waitFor();
    const tracks = await ada.call<{ id: number; keyframes: { frame: number }[] }[]>('get', `${qc}/tasks/${frames[0].id}/tracks`);
    assert.deepEqual(tracks.map((t) => [t.id, t.keyframes.map((k) => k.frame)]), [[1, [0, 8]]]);
    const middle = await ada.call<Task>('get', `${qc}/tasks/${frames[4].id}`);
    assert.equal(middle.shapes.length, 1);
    assert.deepEqual([middle.shapes[0].track_id, middle.shapes[0].keyframe, middle.shapes[0].class_id], [1, false, car]);
    assert.ok(Math.abs(middle.shapes[0].geometry.x - 40) < 2 && Math.abs(middle.shapes[0].geometry.width - 80) < 2, JSON.stringify(middle.shapes[0].geometry));
    await until('the track listed on the timeline', async () => (await page.locator('[data-track-id="1"]').count()) === 1);

    // Stepping to frame 2, the editor shows the track's interpolated box there.
    await page.keyboard.press('.');
    await page.keyboard.press('.');
    await until('frame 2 open', async () => (await openFrame()) === 2);
    await until('the interpolated box on frame 2', () => page.evaluate(() => [...window.__versaEditor!.controller.shapes.values()].some((s) => s.ann.track_id === 1 && s.ann.interpolated === true)));
    await screenshot(page, 'quality-control-video-task-01-track');

    // Moving it 10 pixels right makes frame 2 a keyframe of her task track (saved to her task, not the video's).
    await page.keyboard.press('v');
    const grab = await screenOf(80, 80);
    const drop = await screenOf(90, 80);
    await page.mouse.click(grab.x, grab.y);
    await page.mouse.move(grab.x, grab.y);
    await page.mouse.down();
    await page.mouse.move(drop.x, drop.y, { steps: 4 });
    await page.mouse.up();
    const moved = await until('the keyframe on frame 2', async () => {
      const [track] = await ada.call<{ keyframes: { frame: number; geometry: Record<string, number> }[] }[]>('get', `${qc}/tasks/${frames[0].id}/tracks`);
      return track.keyframes.length === 3 ? track : undefined;
    });
    assert.deepEqual(moved.keyframes.map((k) => k.frame), [0, 2, 8]);
    assert.ok(Math.abs(moved.keyframes[1].geometry.x - 50) < 2, JSON.stringify(moved.keyframes[1].geometry));
    // Frame 1 is interpolated again, between the box on frame 0 and the moved one.
    assert.ok(Math.abs((await ada.call<Task>('get', `${qc}/tasks/${frames[1].id}`)).shapes[0].geometry.x - (40 + moved.keyframes[1].geometry.x) / 2) < 0.01);

    // Playing moves on to the last frame of the set.
    await page.getByRole('button', { name: 'Play' }).click();
    await until('played to the last frame', async () => (await openFrame()) === 9 && (await page.getByRole('button', { name: 'Play' }).count()) === 1);

    // Her track is in her task only: the video has no track, the frames no annotation.
    assert.deepEqual(await owner.call('get', `/api/videos/${videoId}/tracks`), []);
    for (const f of [frames[0], frames[4], frames[8]]) assert.deepEqual(await owner.call('get', `/api/images/${f.id}/annotations`), [], `frame ${f.frame}`);

    // Submit: the whole task set is submitted.
    await page.getByTestId('submit-task').click();
    await until('the set submitted', async () => (await ada.call<Task[]>('get', `${qc}/tasks?video_id=${videoId}`)).every((t) => t.status === 'submitted'));
    assert.equal((await ada.call<Task[]>('get', `${qc}/tasks?video_id=${videoId}`)).length, 10);

    // The lead reviews it on Team quality: one item for the set, shown from its first frame with shapes (frame 0);
    // stepping shows frame 1; a change request gives every frame back to Ada.
    await signPageIn(page, base, owner.email);
    await page.goto(`${base}/projects/${projectId}/quality`);
    const section = page.getByRole('region', { name: 'Task reviews' });
    await section.getByTestId('task-reviews').waitFor();
    assert.equal(await section.locator('tbody tr').count(), 1);
    assert.match((await section.locator('tbody tr').textContent()) ?? '', new RegExp(`video ${videoId} · 10 frames`));
    await section.getByTestId('open-task-review').click();
    const view = section.getByTestId('task-review');
    await view.locator('figure.annotated-image').waitFor();
    assert.equal(await view.getAttribute('data-image'), String(frames[0].id));
    await view.getByTestId('next-frame').click();
    await until('frame 1 shown', async () => (await view.getAttribute('data-image')) === String(frames[1].id));
    await view.locator('figure.annotated-image').waitFor();
    await screenshot(page, 'task-review-video-set');
    await view.getByLabel('Review comment').fill('Follow the car to the end');
    await view.getByTestId('request-changes').click();
    await section.getByTestId('task-reviews-empty').waitFor();
    const back = await ada.call<(Task & { review_state: string })[]>('get', `${qc}/tasks?video_id=${videoId}`);
    assert.deepEqual([...new Set(back.map((t) => `${t.status} ${t.review_state}`))], ['open changes_requested']);
    assert.deepEqual(live.errors, []);
    for (const s of sessions) await s.dispose();
  });
});
