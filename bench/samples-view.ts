/// <reference lib="dom" />
/**
 * The tabular samples view in headless Chromium (issue 15: 60 fps while scrolling 100,000 rows): imports N rows ×
 * 10 columns, opens `/projects/{id}/samples?modality=tabular`, scrolls to the end until every row is loaded (the
 * page fetches 200 rows at a time as the end comes near), then scrolls the whole table top to bottom and back at a
 * steady speed, one step per animation frame, timing every frame. Prints a table; asserts nothing.
 *   npx tsx bench/samples-view.ts [rows=100000] [frames=1200]
 */
import { SKIP_REASON, ensureWebBuilt, launchBrowser, startServer } from '../test/browser/browser-harness.js';

const ROWS = Number(process.argv[2] ?? 100_000);
const FRAMES = Number(process.argv[3] ?? 1200);

/** Runs in the page: scrolls `el` by `step` px per frame for `frames` frames (bouncing at the ends); frame times in ms. */
const SCROLL = `async (frames) => {
  const el = document.querySelector('[data-testid="sample-table-body"]');
  const step = Math.max(30, Math.round((el.scrollHeight - el.clientHeight) / (frames / 2)));
  let direction = 1;
  const times = [];
  let last = performance.now();
  for (let i = 0; i < frames; i++) {
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const now = performance.now();
    times.push(now - last);
    last = now;
    const next = el.scrollTop + direction * step;
    if (next >= el.scrollHeight - el.clientHeight || next <= 0) direction = -direction;
    el.scrollTop = next;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { fps: 1000 / mean, p95: sorted[Math.floor(sorted.length * 0.95)], max: sorted[sorted.length - 1], step, rows: document.querySelectorAll('.sample-table-row').length };
}`;

async function main(): Promise<void> {
  if (SKIP_REASON) {
    console.log(`skipped: ${SKIP_REASON}`);
    return;
  }
  ensureWebBuilt();
  const server = await startServer();
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    const base = server.baseUrl;
    await page.request.post(`${base}/api/auth/register`, { data: { email: 'bench@example.com', password: 'correct horse battery' } });
    await page.request.post(`${base}/api/auth/login`, { data: { email: 'bench@example.com', password: 'correct horse battery' } });
    const project = await (await page.request.post(`${base}/api/projects`, { data: { name: 'Samples view bench', project_type: 'classification' } })).json();
    const lines = ['a,b,c,d,e,f,g,h,i,kind'];
    for (let r = 0; r < ROWS; r++) lines.push(`${r},${(r * 7) % 1000},${((r * 13) % 10000) / 100},red,${r % 2 === 0},text ${r},${r % 97},${(r * 3) % 41},blue,${['cat', 'dog', 'bird'][r % 3]}`);
    let t0 = performance.now();
    const imported = await page.request.post(`${base}/api/projects/${project.id}/import/tabular`, {
      multipart: { target: 'kind', file: { name: 'rows.csv', mimeType: 'text/csv', buffer: Buffer.from(lines.join('\n')) } },
      timeout: 600_000,
    });
    if (imported.status() !== 201) throw new Error(`import: ${imported.status()} ${await imported.text()}`);
    const importSeconds = (performance.now() - t0) / 1000;

    t0 = performance.now();
    await page.goto(`${base}/projects/${project.id}/samples?modality=tabular`);
    await page.locator('.sample-table-row').first().waitFor();
    const firstRows = performance.now() - t0;

    // Load every row: keep scrolling to the end of what is loaded until the last row is in the DOM.
    t0 = performance.now();
    const body = page.getByTestId('sample-table-body');
    for (;;) {
      await body.evaluate((el) => (el.scrollTop = el.scrollHeight));
      if ((await page.locator(`.sample-table-row[aria-rowindex="${ROWS}"]`).count()) === 1) break;
      await page.waitForTimeout(20);
      if (performance.now() - t0 > 600_000) throw new Error('rows did not all load within 10 minutes');
    }
    const loadSeconds = (performance.now() - t0) / 1000;
    await body.evaluate((el) => (el.scrollTop = 0));

    const runs = [];
    for (let round = 0; round < 3; round++) runs.push((await page.evaluate(`(${SCROLL})(${FRAMES})`)) as { fps: number; p95: number; max: number; step: number; rows: number });
    const median = [...runs].sort((a, b) => a.fps - b.fps)[1];
    console.log(`\nTabular samples view, ${ROWS.toLocaleString('en')} rows × 10 columns, Chromium headless 1280×800`);
    console.table([
      { measure: 'import through the API (s)', value: importSeconds.toFixed(1) },
      { measure: 'page open → first rows (ms)', value: firstRows.toFixed(0) },
      { measure: `every row loaded by scrolling to the end (s, ${Math.ceil(ROWS / 200)} pages)`, value: loadSeconds.toFixed(1) },
      ...runs.map((r, i) => ({ measure: `scroll round ${i + 1}: ${FRAMES} frames, ${r.step} px per frame, top ↔ bottom`, value: `${r.fps.toFixed(1)} fps · p95 frame ${r.p95.toFixed(1)} ms · longest ${r.max.toFixed(1)} ms · ${r.rows} rows in the DOM` })),
      { measure: 'median round', value: `${median.fps.toFixed(1)} fps (target 60)` },
    ]);
  } finally {
    await browser.close();
    await server.close();
  }
}

await main();
