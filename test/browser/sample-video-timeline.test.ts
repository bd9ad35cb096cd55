/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testVideo } from '../helpers/video-fixtures.js';
import { buildZip } from '../helpers/zip-build.js';
import { apiCaller, livePageSuite, screenshot, signInNewUser, SKIP_REASON, until } from './browser-harness.js';

const jsonl = (rows: unknown[]) => Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

/**
 * Issue 26, Samples: a video sample's time segments are drawn on the timeline the editor uses for video (overlapping
 * ones in lanes, placed by time), a click on one seeks to its start, and "Send to image project" makes the clip's
 * frames images of another project, classified from the segments, reporting the label that has no class there.
 */
describe('the video samples page: segments on the timeline, send to an image project', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  it('draws the segments on the timeline and sends a clip of the sample to an image project as frames', async () => {
    const page = live.page;
    await signInNewUser(call, 'sam@example.com');
    const sourceId = (await call<{ id: number }>('post', '/api/projects', { name: 'Clips' })).id;
    const zip = await buildZip([
      { name: 'v.jsonl', data: jsonl([{ file: 'walk.mp4', segments: [[0.5, 1.2, 'walk'], [1.0, 1.6, 'run'], [0, 0.3, 'ghost']] }]) },
      { name: 'walk.mp4', data: testVideo({ size: '320x240', rate: 10, seconds: 2 }) },
    ]);
    const imported = await page.request.post(`${base()}/api/projects/${sourceId}/import/jsonl`, { multipart: { modality: 'video', file: { name: 'v.zip', mimeType: 'application/zip', buffer: zip } } });
    assert.equal(imported.status(), 201, await imported.text());
    const targetId = (await call<{ id: number }>('post', '/api/projects', { name: 'Frames target', project_type: 'classification', multi_label: true })).id;
    const classIds: Record<string, number> = {};
    for (const name of ['walk', 'run']) classIds[name] = (await call<{ id: number }>('post', `/api/projects/${targetId}/classes`, { name })).id;

    await page.goto(`${base()}/projects/${sourceId}/samples?modality=video`);
    const timeline = page.getByTestId('sample-timeline');
    await timeline.waitFor();
    const spans = timeline.getByTestId('timeline-span');
    await until('three segments drawn', async () => (await spans.count()) === 3);
    const strip = (await timeline.getByTestId('timeline-strip').boundingBox())!;
    const placed = await spans.evaluateAll((els) => els.map((e) => {
      const r = e.getBoundingClientRect();
      return { label: e.getAttribute('data-label'), left: r.left, width: r.width, top: r.top };
    }));
    const of = (label: string) => placed.find((p) => p.label === label)!;
    // 2 s across the strip: walk 0.5–1.2 s, run 1.0–1.6 s, ghost 0–0.3 s.
    for (const [label, from, to] of [['walk', 0.5, 1.2], ['run', 1.0, 1.6], ['ghost', 0, 0.3]] as const) {
      assert.ok(Math.abs(of(label).left - (strip.x + (from / 2) * strip.width)) < 2, `${label} starts at ${from} s: ${JSON.stringify(of(label))}`);
      assert.ok(Math.abs(of(label).width - ((to - from) / 2) * strip.width) < 2, `${label} lasts ${to - from} s`);
    }
    assert.notEqual(of('walk').top, of('run').top, 'overlapping segments lie in different lanes');
    assert.equal(of('walk').top, of('ghost').top, 'segments apart share a lane');
    // The same component as the editor's timeline: its scrubber, labelled Frame, over the 20 frames (frame n at n / 20).
    assert.equal(await timeline.getByRole('slider', { name: 'Frame' }).getAttribute('max'), '20');
    await timeline.locator('[data-testid="timeline-span"][data-label="run"]').click();
    await page.getByTestId('frame').getByText(/^Frame 10 · 1\.000 s/).waitFor();
    await screenshot(page, 'sample-video-timeline-01');

    await page.getByRole('button', { name: 'Send to image project' }).click();
    const form = page.getByRole('form', { name: 'Send to image project' });
    await form.getByLabel('Target project').selectOption(String(targetId));
    await form.getByLabel('Step').fill('2');
    await form.getByLabel('Start (s)').fill('0.5');
    await form.getByLabel('End (s)').fill('1.5');
    await form.getByRole('button', { name: 'Send frames' }).click();
    const outcome = page.getByTestId('send-frames-outcome');
    await outcome.getByText(/5 frames sent to Frames target, 5 classified from its segments/).waitFor({ timeout: 60_000 });
    assert.equal(await outcome.getByTestId('missing-classes').textContent(), 'ghost');
    await screenshot(page, 'sample-video-timeline-02-sent');

    const [video] = await call<{ id: number; range_start_s: number; range_end_s: number; step: number; status: string }[]>('get', `/api/projects/${targetId}/videos`);
    assert.deepEqual([video.status, video.range_start_s, video.range_end_s, video.step], ['ready', 0.5, 1.5, 2]);
    const frames = await call<{ id: number; frame: number }[]>('get', `/api/projects/${targetId}/images?video_id=${video.id}`);
    assert.deepEqual(frames.map((f) => f.frame), [5, 7, 9, 11, 13]);
    const on11 = await call<{ class_id: number }[]>('get', `/api/images/${frames[3].id}/annotations`);
    assert.deepEqual(on11.map((a) => a.class_id).sort(), [classIds.walk, classIds.run].sort());
    assert.deepEqual(live.errors, []);
  });
});
