/// <reference lib="dom" />
/**
 * Editor performance in headless Chromium: frames per second while panning and zooming an image with 5,000 boxes
 * (requestAnimationFrame timing, one full repaint per frame), time to first paint of the editor, time to switch to
 * the next (prefetched) image, and the gzip size of the JS bundle. Prints a table; asserts nothing.
 *   npx tsx bench/editor.ts [boxes]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { ensureWebBuilt, launchBrowser, SKIP_REASON, startServer } from '../test/browser/browser-harness.js';

const BOXES = Number(process.argv[2] ?? 5000);
const WIDTH = 4000;
const HEIGHT = 3000;
const HUGE_WIDTH = 8000;
const HUGE_HEIGHT = 6000;

async function main(): Promise<void> {
  if (SKIP_REASON) {
    console.log(`skipped: ${SKIP_REASON}`);
    return;
  }
  ensureWebBuilt();
  const server = await startServer();
  const app = server.versa.app;
  const call = async (method: 'GET' | 'POST', url: string, token: string | null, payload?: unknown) => {
    const res = await app.inject({ method, url, payload: payload as object, headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const email = 'bench@example.com', password = 'correct horse battery';
  await call('POST', '/api/auth/register', null, { email, password });
  const { token } = await call('POST', '/api/auth/login', null, { email, password });
  const project = await call('POST', '/api/projects', token, { name: 'Editor bench', project_type: 'object_detection' });
  const classes = [];
  for (let i = 0; i < 8; i++) classes.push(await call('POST', `/api/projects/${project.id}/classes`, token, { name: `class-${i}` }));

  const imageIds: number[] = [];
  // Two 4000 × 3000 images with boxes, then an 8000 × 6000 one that must open without freezing the page.
  const sizes = [[WIDTH, HEIGHT], [WIDTH, HEIGHT], [HUGE_WIDTH, HUGE_HEIGHT]];
  for (const [i, [width, height]] of sizes.entries()) {
    const png = await sharp({ create: { width, height, channels: 3, background: { r: 60 + i * 80, g: 90, b: 120 } } })
      .composite([{ input: { create: { width: 400, height: 300, channels: 3, background: { r: 240, g: 240, b: 240 } } }, left: 100 * (i + 1), top: 100 }])
      .png()
      .toBuffer();
    const boundary = 'bench' + i;
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="bench-${i}.png"\r\nContent-Type: image/png\r\n\r\n`),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await app.inject({
      method: 'POST',
      url: `/api/projects/${project.id}/images`,
      payload: body,
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    imageIds.push(res.json().images[0].id);
  }
  const started = Date.now();
  for (const [n, imageId] of imageIds.slice(0, 2).entries()) {
    const count = n === 0 ? BOXES : Math.round(BOXES / 10);
    for (let i = 0; i < count; i++) {
      const x = (i * 7919) % (WIDTH - 60), y = (i * 104729) % (HEIGHT - 60);
      await call('POST', `/api/images/${imageId}/annotations`, token, {
        class_id: classes[i % classes.length].id,
        annotation_type: 'bbox',
        geometry: { x, y, width: 20 + (i % 40), height: 20 + ((i * 3) % 40) },
      });
    }
  }
  console.log(`seeded ${BOXES} + ${Math.round(BOXES / 10)} boxes in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const browser = await launchBrowser();
  const page = browser.page;
  await page.request.post(`${server.baseUrl}/api/auth/login`, { data: { email, password } });
  await page.goto(`${server.baseUrl}/projects/${project.id}/annotate?image=${imageIds[0]}`);
  await page.waitForFunction(() => (window.__versaEditor?.firstPaintAt() ?? 0) > 0, undefined, { timeout: 60_000 });
  const firstPaint = await page.evaluate(() => window.__versaEditor!.firstPaintAt());

  // Plain JavaScript text: tsx would wrap named functions in a helper that does not exist inside the page.
  const MEASURE = `async (m) => {
    const c = window.__versaEditor.controller;
    c.fit();
    const frames = [], paints = [];
    const rect = c.canvas.getBoundingClientRect();
    let last = 0;
    await new Promise((done) => {
      const step = (t) => {
        if (last) frames.push(t - last);
        last = t;
        const i = frames.length;
        if (m === 'pan') c.panBy(Math.sin(i / 10) * 12, Math.cos(i / 10) * 12);
        else c.zoomAt(rect.width / 2, rect.height / 2, i % 60 < 30 ? 1.04 : 1 / 1.04);
        c.paint();
        paints.push(c.lastPaintMs);
        if (frames.length < 180) requestAnimationFrame(step); else done();
      };
      requestAnimationFrame(step);
    });
    const sorted = [...frames].sort((a, b) => a - b);
    const mean = frames.reduce((a, b) => a + b, 0) / frames.length;
    return { fps: 1000 / mean, p95: sorted[Math.floor(sorted.length * 0.95)], paint: paints.reduce((a, b) => a + b, 0) / paints.length };
  }`;
  const measure = (mode: 'pan' | 'zoom') =>
    page.evaluate(`(${MEASURE})(${JSON.stringify(mode)})`) as Promise<{ fps: number; p95: number; paint: number }>;
  const pan = await measure('pan');
  const zoom = await measure('zoom');

  // The next image is prefetched while the first is open; give the prefetch a moment, as a person would.
  await page.waitForTimeout(1500);
  await page.keyboard.press('d');
  await page.waitForFunction((id) => window.__versaEditor?.imageId() === id, imageIds[1]);
  const switchMs = await page.evaluate(() => window.__versaEditor!.lastSwitchMs());

  // The 8000 × 6000 image: long main-thread tasks (> 50 ms) while it is prefetched and opened.
  await page.evaluate(`(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask' });
  })()`);
  await page.waitForTimeout(3000);
  const hugeStarted = Date.now();
  await page.keyboard.press('d');
  await page.waitForFunction((id) => window.__versaEditor?.imageId() === id, imageIds[2], { timeout: 60_000 });
  const hugeOpenMs = Date.now() - hugeStarted;
  const hugeSwitchMs = await page.evaluate(() => window.__versaEditor!.lastSwitchMs());
  await page.waitForTimeout(500);
  const longTasks = (await page.evaluate('window.__longTasks')) as number[];
  const hugeZoom = await measure('zoom');
  await browser.close();
  await server.close();

  const assets = readdirSync('web/dist/assets').filter((f) => f.endsWith('.js'));
  const gz = (f: string) => gzipSync(readFileSync(join('web/dist/assets', f))).length;
  const total = assets.reduce((sum, f) => sum + gz(f), 0);

  const rows: [string, string][] = [
    [`pan, ${BOXES} boxes in view (fit)`, `${pan.fps.toFixed(1)} fps · p95 frame ${pan.p95.toFixed(1)} ms · paint ${pan.paint.toFixed(2)} ms`],
    [`zoom around centre, ${BOXES} boxes`, `${zoom.fps.toFixed(1)} fps · p95 frame ${zoom.p95.toFixed(1)} ms · paint ${zoom.paint.toFixed(2)} ms`],
    [`editor first paint (${WIDTH}×${HEIGHT}, ${BOXES} boxes)`, `${firstPaint.toFixed(0)} ms after navigation start`],
    ['switch to next image (prefetched)', `${switchMs.toFixed(1)} ms`],
    [`open ${HUGE_WIDTH}×${HUGE_HEIGHT} image (prefetched)`, `${hugeSwitchMs.toFixed(1)} ms in the editor, ${hugeOpenMs} ms key to shown`],
    [`long tasks while loading it`, longTasks.length ? `${longTasks.length}, longest ${Math.max(...longTasks).toFixed(0)} ms` : 'none over 50 ms'],
    [`zoom on the ${HUGE_WIDTH}×${HUGE_HEIGHT} image`, `${hugeZoom.fps.toFixed(1)} fps · p95 frame ${hugeZoom.p95.toFixed(1)} ms · paint ${hugeZoom.paint.toFixed(2)} ms`],
    ['JS bundle, gzip (all chunks)', `${(total / 1024).toFixed(1)} KiB (${assets.map((f) => `${f.replace(/-[\w-]+\.js$/, '')} ${(gz(f) / 1024).toFixed(1)}`).join(', ')})`],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
