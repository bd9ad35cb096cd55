/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiCaller, livePageSuite, signInNewUser, SKIP_REASON, until } from './browser-harness.js';
import { testVideo } from '../helpers/video-fixtures.js';

declare global {
  interface Window {
    __minimapDraws?: number;
  }
}

/**
 * The minimap while a video plays (issue 26): it used to be drawn on every paint, two canvas draws a frame (the frame
 * scaled down, then the view's outline), though at the fitted view playback shows it is hidden. It is now drawn only
 * when what it shows changes: not at all while hidden, its picture when the image changes (throttled while playing),
 * the outline when the view moves. Canvas draws onto the minimap (and onto its off-screen picture) are counted.
 */
describe('the minimap during video playback', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);
  const editor = <T,>(fn: () => T) => live.page.evaluate(fn);
  const draws = () => editor(() => window.__minimapDraws!);
  const painted = () => live.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

  it('is not redrawn for each frame played, and is redrawn when the view or the image shown changes', async () => {
    const page = live.page;
    await signInNewUser(call, 'mina@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Video' })).id;
    const res = await page.request.post(`${base()}/api/projects/${projectId}/videos`, { multipart: { file: { name: 'moving-box.mp4', mimeType: 'video/mp4', buffer: testVideo({ size: '320x240', rate: 30, seconds: 2 }) } } });
    assert.equal(res.status(), 202, await res.text());
    const videoId = (await res.json()).id as number;
    await until('the frames decoded', async () => (await call<{ status: string }>('get', `/api/videos/${videoId}`)).status === 'ready', 60_000);
    const frames = await call<{ id: number }[]>('get', `/api/projects/${projectId}/images?video_id=${videoId}&limit=100`);
    assert.equal(frames.length, 60);

    await page.goto(`${base()}/projects/${projectId}/annotate?image=${frames[0].id}`);
    await until('the editor on frame 0', async () => (await editor(() => window.__versaEditor?.imageId() ?? null)) === frames[0].id);
    await page.getByTestId('timeline').waitFor();
    await page.waitForLoadState('networkidle');
    await editor(() => {
      const minimap = document.querySelector<HTMLCanvasElement>('canvas.minimap')!;
      const draw = CanvasRenderingContext2D.prototype.drawImage;
      window.__minimapDraws = 0;
      CanvasRenderingContext2D.prototype.drawImage = function (this: CanvasRenderingContext2D, ...args: unknown[]) {
        const c = this.canvas as HTMLCanvasElement;
        if (c === minimap || (!c.isConnected && c.width === minimap.width && c.height === minimap.height)) window.__minimapDraws! += 1;
        return (draw as (...a: unknown[]) => void).apply(this, args);
      } as typeof draw;
    });

    // Played at the fitted view (the whole frame in view), the minimap is hidden: nothing is drawn on it.
    await page.getByRole('button', { name: 'Play' }).click();
    await until('played to the last frame', async () => (await editor(() => window.__versaEditor!.imageId())) === frames[59].id && (await page.getByRole('button', { name: 'Play' }).count()) === 1, 30_000);
    const shown = await editor(() => window.__versaTimeline!.shown());
    assert.ok(shown >= 30, `${shown} frames shown`);
    assert.equal(await page.locator('canvas.minimap').evaluate((c) => getComputedStyle(c).display), 'none');
    assert.equal(await draws(), 0, `minimap draws while ${shown} frames played`);

    // Zoomed in, it shows: its picture of the frame now open, then the view outlined (two draws).
    await editor(() => window.__versaEditor!.controller.zoomAt(160, 120, 4));
    await painted();
    assert.notEqual(await page.locator('canvas.minimap').evaluate((c) => getComputedStyle(c).display), 'none');
    assert.equal(await draws(), 2);
    // Painting again with nothing changed draws nothing on it; panning redraws the outline alone.
    await editor(() => {
      window.__versaEditor!.controller.paint();
      window.__versaEditor!.controller.paint();
    });
    assert.equal(await draws(), 2);
    await editor(() => window.__versaEditor!.controller.panBy(-20, 0));
    await painted();
    assert.equal(await draws(), 3);
    assert.deepEqual(live.errors, []);
  });
});
