/// <reference lib="dom" />
/**
 * The editor on a video's frames in headless Chromium (issue 26): a generated 1920 × 1080 video (FFmpeg `testsrc`
 * with a moving box) decoded into frames, one track over all of them (two keyframes, every frame between them
 * interpolated and drawn dashed). Measures (a) frame step: '.' pressed to the next frame painted, stepping at a
 * steady pace (100 ms between presses: the prefetch keeps up) and held down (back to back), median and p90, and
 * (b) playback: frames shown per second while the timeline plays (capped at the video's rate, at most 30).
 * Targets: step ≤ 50 ms, playback ≥ 25 fps. Prints a table; asserts nothing.
 *   npx tsx bench/video-editor.ts [seconds=4] [steps=30]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureWebBuilt, launchBrowser, SKIP_REASON, startServer } from '../test/browser/browser-harness.js';

const SECONDS = Number(process.argv[2] ?? 4);
const STEPS = Number(process.argv[3] ?? 30);
const RATE = 30;

declare global {
  interface Window {
    __versaTimeline?: { frame: () => number | null; play: () => void; pause: () => void; shown: () => number };
  }
}

function video(): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'versa-bench-video-'));
  try {
    const file = join(dir, 'in.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=1920x1080:rate=${RATE}`, '-t', String(SECONDS),
      '-vf', "drawbox=x='100+t*200':y=200:w=240:h=240:color=red@1:t=fill", '-pix_fmt', 'yuv420p', '-c:v', 'libx264', file]);
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function main(): Promise<void> {
  if (SKIP_REASON) return console.log(`skipped: ${SKIP_REASON}`);
  ensureWebBuilt();
  const server = await startServer();
  const browser = await launchBrowser();
  try {
    const page = browser.page;
    page.on('crash', () => console.log('page crashed'));
    page.on('pageerror', (e) => console.log('page error:', e.message));
    const base = server.baseUrl;
    const post = async (url: string, data: object) => {
      const res = await page.request.post(base + url, { data });
      if (!res.ok()) throw new Error(`${url}: ${await res.text()}`);
      return res.json();
    };
    const account = { email: 'bench@example.com', password: 'correct horse battery' };
    await post('/api/auth/register', account);
    await post('/api/auth/login', account);
    const project = await post('/api/projects', { name: 'video bench' });
    const cls = await post(`/api/projects/${project.id}/classes`, { name: 'box' });
    const uploaded = await page.request.post(`${base}/api/projects/${project.id}/videos`, { multipart: { file: { name: 'in.mp4', mimeType: 'video/mp4', buffer: video() } } });
    if (uploaded.status() !== 202) throw new Error(await uploaded.text());
    const videoId = (await uploaded.json()).id;
    const decodeStart = performance.now();
    for (;;) {
      const v = await (await page.request.get(`${base}/api/videos/${videoId}`)).json();
      if (v.status === 'failed') throw new Error(v.error);
      if (v.status === 'ready') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const decodeS = (performance.now() - decodeStart) / 1000;
    const frames: { id: number; frame: number }[] = await (await page.request.get(`${base}/api/projects/${project.id}/images?video_id=${videoId}&limit=10000`)).json();
    const last = frames.length - 1;
    await post(`/api/videos/${videoId}/tracks`, {
      class_id: cls.id,
      keyframes: [{ frame: 0, annotation_type: 'bbox', geometry: { x: 100, y: 200, width: 240, height: 240 } }, { frame: last, annotation_type: 'bbox', geometry: { x: 100 + (200 * last) / RATE, y: 200, width: 240, height: 240 } }],
    });

    const openAt = async (index: number) => {
      await page.goto(`${base}/projects/${project.id}/annotate?image=${frames[index].id}`);
      await page.waitForFunction((id) => window.__versaEditor?.imageId() === id && !!window.__versaTimeline, frames[index].id, { timeout: 60_000 });
      await page.waitForTimeout(1000); // the prefetch of the next frames
    };
    /** '.' pressed, to the next frame's first paint (two animation frames after the editor opened it). */
    const step = () =>
      page.evaluate(async () => {
        const before = window.__versaEditor!.imageId();
        const start = performance.now();
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key: '.', bubbles: true }));
        while (window.__versaEditor!.imageId() === before) await new Promise((r) => requestAnimationFrame(r));
        await new Promise((r) => requestAnimationFrame(r));
        return performance.now() - start;
      });
    const steps = Math.min(STEPS, last - 1);
    await openAt(0);
    const steady: number[] = [];
    for (let i = 0; i < steps; i++) {
      steady.push(await step());
      await page.waitForTimeout(100);
    }
    await openAt(0);
    const held: number[] = [];
    for (let i = 0; i < steps; i++) held.push(await step());

    await openAt(0);
    const played = await page.evaluate(async () => {
      const t = window.__versaTimeline!;
      const shown = t.shown();
      const start = performance.now();
      t.play();
      await new Promise((r) => setTimeout(r, 100));
      while (document.querySelector('[aria-label="Pause"]')) await new Promise((r) => setTimeout(r, 20));
      return { frames: t.shown() - shown, s: (performance.now() - start) / 1000 };
    });

    console.log(`${frames.length} frames of 1920×1080 (decoded in ${decodeS.toFixed(1)} s), one interpolated track; load average ${loadavg()[0].toFixed(2)}\n`);
    console.log('| measure | median | p90 | target |');
    console.log('|---|---|---|---|');
    console.log(`| frame step, steady (ms) | ${quantile(steady, 0.5).toFixed(1)} | ${quantile(steady, 0.9).toFixed(1)} | ≤ 50 |`);
    console.log(`| frame step, key held (ms) | ${quantile(held, 0.5).toFixed(1)} | ${quantile(held, 0.9).toFixed(1)} | |`);
    console.log(`| playback (frames/s) | ${(played.frames / played.s).toFixed(1)} | | ≥ 25 |`);
  } finally {
    await browser.close();
    await server.close();
  }
}

await main();
