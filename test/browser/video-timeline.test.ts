/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiCaller, livePageSuite, screenshot, signInNewUser, SKIP_REASON, until } from './browser-harness.js';
import { testVideo } from '../helpers/video-fixtures.js';

interface Frame {
  id: number;
  frame: number;
}
interface Track {
  id: number;
  keyframes: { frame: number; geometry: { x: number; y: number; width: number; height: number } }[];
}

/**
 * The video timeline in the editor (issue 26): a generated video's frames, a track with two keyframes made over the
 * API; stepping frames by key shows the box between them interpolated and dashed; moving it makes a keyframe (the
 * track's, through the tracks API) drawn solid; hiding the track hides it on this frame and the next.
 */
describe('the editor timeline on video frames', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  const editor = <T>(fn: () => T) => live.page.evaluate(fn);
  const screenOf = (x: number, y: number) =>
    live.page.evaluate(([ix, iy]) => {
      const c = window.__versaEditor!.controller;
      const r = c.canvas.getBoundingClientRect();
      return { x: r.left + c.tx + ix * c.scale, y: r.top + c.ty + iy * c.scale };
    }, [x, y]);
  /** What the canvas drew once its next paint is done: the track shapes stroked solid and dashed (no suggestion here). */
  const drawn = async () => {
    await live.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const { suggested, ...strokes } = await editor(() => {
      const c = window.__versaEditor!.controller;
      c.paint();
      return { ...c.drawn };
    });
    assert.equal(suggested, 0, 'no suggestion is drawn');
    return strokes;
  };
  const trackShapes = () => editor(() => [...window.__versaEditor!.controller.shapes.values()].map((s) => s.ann).filter((a) => a.track_id != null).map((a) => ({ interpolated: a.interpolated, x: (a.geometry as { x: number }).x })));

  it('steps frames, draws the interpolated box dashed, makes a keyframe by moving it, hides the track', async () => {
    const page = live.page;
    await signInNewUser(call, 'vera@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Video' })).id;
    const classId = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'box' })).id;
    const res = await page.request.post(`${base()}/api/projects/${projectId}/videos`, { multipart: { file: { name: 'moving-box.mp4', mimeType: 'video/mp4', buffer: testVideo({ size: '320x240', rate: 10, seconds: 1 }) } } });
    assert.equal(res.status(), 202, await res.text());
    const videoId = (await res.json()).id as number;
    await until('the frames decoded', async () => (await call<{ status: string }>('get', `/api/videos/${videoId}`)).status === 'ready', 60_000);
    const frames = await call<Frame[]>('get', `/api/projects/${projectId}/images?video_id=${videoId}&limit=100`);
    assert.equal(frames.length, 10);
    const box = (x: number) => ({ x, y: 20, width: 30, height: 30 });
    const track = await call<Track>('post', `/api/videos/${videoId}/tracks`, {
      class_id: classId,
      keyframes: [{ frame: 0, annotation_type: 'bbox', geometry: box(10) }, { frame: 8, annotation_type: 'bbox', geometry: box(26) }],
    });

    await page.goto(`${base()}/projects/${projectId}/annotate?image=${frames[0].id}`);
    await until('the editor on frame 0', async () => (await editor(() => window.__versaEditor?.imageId() ?? null)) === frames[0].id);
    await page.getByTestId('timeline').waitFor();
    await until('the track listed', async () => (await page.locator(`[data-track-id="${track.id}"]`).count()) === 1);
    assert.deepEqual(await trackShapes(), [{ interpolated: false, x: 10 }]);
    assert.deepEqual(await drawn(), { solid: 1, dashed: 0 });

    // '.' steps a frame forward: frame 2 is between the keyframes, its box interpolated (x = 10 + 16 · 2/8) and dashed.
    await page.keyboard.press('.');
    await page.keyboard.press('.');
    await until('frame 2 open', async () => (await editor(() => window.__versaEditor!.imageId())) === frames[2].id);
    assert.match(await page.getByTestId('frame-position').innerText(), /Frame 2 · 3 \/ 10/);
    assert.deepEqual(await trackShapes(), [{ interpolated: true, x: 14 }]);
    assert.deepEqual(await drawn(), { solid: 0, dashed: 1 });
    await screenshot(page, 'video-timeline-interpolated');

    // Moving the interpolated box 10 pixels right makes it a keyframe of the track on frame 2, drawn solid.
    await page.keyboard.press('v');
    const from = await screenOf(29, 35);
    const to = await screenOf(39, 35);
    await page.mouse.click(from.x, from.y);
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y, { steps: 4 });
    await page.mouse.up();
    const keyframe = await until('the keyframe saved', async () => (await call<Track>('get', `/api/tracks/${track.id}`)).keyframes.find((k) => k.frame === 2));
    assert.ok(Math.abs(keyframe.geometry.x - 24) <= 1.5, `moved keyframe at x ${keyframe.geometry.x}`);
    assert.deepEqual((await call<Track>('get', `/api/tracks/${track.id}`)).keyframes.map((k) => k.frame), [0, 2, 8]);
    await until('drawn solid', async () => (await drawn()).solid === 1 && (await drawn()).dashed === 0);

    // ',' steps back: frame 1 is interpolated again, now between 10 and the new keyframe.
    await page.keyboard.press(',');
    await until('frame 1 open', async () => (await editor(() => window.__versaEditor!.imageId())) === frames[1].id);
    const [between] = await trackShapes();
    assert.equal(between.interpolated, true);
    assert.ok(Math.abs(between.x - (10 + keyframe.geometry.x) / 2) < 0.01, `frame 1 at x ${between.x}`);

    // Hidden in the track list: not drawn on this frame, nor on the next.
    await page.getByLabel(`Show track ${track.id}`).uncheck();
    assert.deepEqual(await drawn(), { solid: 0, dashed: 0 });
    await page.keyboard.press('.');
    await until('frame 2 open again', async () => (await editor(() => window.__versaEditor!.imageId())) === frames[2].id);
    assert.deepEqual(await drawn(), { solid: 0, dashed: 0 });
    await page.getByLabel(`Show track ${track.id}`).check();
    assert.deepEqual(await drawn(), { solid: 1, dashed: 0 });

    // Propagating the selected box one frame on says so as information, not as an error.
    const centre = await screenOf(keyframe.geometry.x + 15, 35);
    await page.mouse.click(centre.x, centre.y);
    await page.getByLabel('Frames to propagate').fill('1');
    await page.getByRole('button', { name: 'Propagate forward' }).click();
    const told = page.locator('.banner', { hasText: 'Propagated to frame 3' });
    await told.waitFor();
    assert.equal(await told.getAttribute('class'), 'banner info');
    assert.deepEqual((await call<Track>('get', `/api/tracks/${track.id}`)).keyframes.map((k) => k.frame), [0, 2, 3, 8]);

    // Playing shows the frames without taking a lock or reading a review for each (the lock is given back when it
    // starts and taken on the last frame when it stops), nor reading again the shapes of a frame it has left unedited.
    await page.goto(`${base()}/projects/${projectId}/annotate?image=${frames[0].id}`);
    await until('the editor on frame 0 again', async () => (await editor(() => window.__versaEditor?.imageId() ?? null)) === frames[0].id);
    await page.waitForLoadState('networkidle'); // the frames ahead prefetched
    const asked: string[] = [];
    const onRequest = (r: { url(): string; method(): string }) => {
      const url = new URL(r.url());
      const image = /\/images\/(\d+)\/(lock|annotations)$/.exec(url.pathname) ?? (url.pathname.endsWith('/reviews') ? [, url.searchParams.get('image_id'), 'reviews'] : null);
      if (image) asked.push(`${r.method()} ${image[2]} ${frames.findIndex((f) => f.id === Number(image[1]))}`);
    };
    page.on('request', onRequest);
    await page.getByRole('button', { name: 'Play' }).click();
    await until('played to the last frame', async () => (await editor(() => window.__versaEditor!.imageId())) === frames[9].id && (await page.getByRole('button', { name: 'Play' }).count()) === 1);
    await until('the lock taken on the last frame', async () => asked.includes('POST lock 9'));
    page.off('request', onRequest);
    const middle = asked.filter((a) => !/ (0|9)$/.test(a));
    assert.deepEqual(middle, [], `no request for frames 1–8 while playing: ${asked.join(', ')}`);
    assert.ok(!asked.includes('GET annotations 0'), `frame 0's shapes not read again: ${asked.join(', ')}`);
    assert.deepEqual(live.errors, []);
  });
});
