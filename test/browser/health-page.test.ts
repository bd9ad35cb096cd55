/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { closeLivePage, openLivePage, SKIP_REASON, screenshot, until, type Browser, type LiveServer } from './browser-harness.js';

const noisePng = (seed: number, level: number) => {
  const data = Buffer.alloc(96 * 64 * 3);
  let s = seed * 2654435761;
  for (let i = 0; i < data.length; i++) data[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
  return sharp(data, { raw: { width: 96, height: 64, channels: 3 } }).png({ compressionLevel: level }).toBuffer();
};

describe('Health tab in Chromium', { skip: SKIP_REASON ?? false }, () => {
  let server: LiveServer;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    ({ server, browser, page } = await openLivePage(errors));
  });
  after(async () => {
    await closeLivePage({ browser, server });
  });

  it('shows the score, readiness, checks and charts; a check opens the grid on its images; cleaning previews, applies and reverts', async () => {
    const base = server.baseUrl;
    const post = async <T>(url: string, data: unknown, status = 201): Promise<T> => {
      const res = await page.request.post(base + url, { data: data as object });
      assert.equal(res.status(), status, `${url}: ${await res.text()}`);
      return (await res.json()) as T;
    };
    await post('/api/auth/register', { email: 'hedy@example.com', password: 'correct horse battery' });
    await post('/api/auth/login', { email: 'hedy@example.com', password: 'correct horse battery' }, 200);
    const { id: projectId } = await post<{ id: number }>('/api/projects', { name: 'Noisy' });
    const files = [await noisePng(1, 9), await noisePng(1, 1), await noisePng(2, 6)];
    const ids: number[] = [];
    for (const [i, buffer] of files.entries()) {
      const res = await page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: `n-${i}.png`, mimeType: 'image/png', buffer } } });
      assert.equal(res.status(), 201, await res.text());
      ids.push((await res.json()).images[0].id);
    }
    const { id: classId } = await post<{ id: number }>(`/api/projects/${projectId}/classes`, { name: 'speck' });
    await post(`/api/images/${ids[2]}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 30, height: 20 } });
    await post(`/api/images/${ids[2]}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 30, height: 21 } });

    await page.goto(`${base}/projects/${projectId}?tab=health`);
    const score = await until('the health score', async () => {
      const text = await page.getByTestId('health-score').textContent();
      return text && /\d+\/100/.test(text) ? text : undefined;
    });
    assert.match(score, /Health \d+\/100/);
    assert.match((await page.getByTestId('readiness').textContent()) ?? '', /Readiness for versa-detect: \d+\/100/);
    const row = (id: string) => page.locator(`tr[data-check="${id}"]`);
    await until('the exact-duplicate row', async () => (await row('exact_duplicates').count()) > 0);
    assert.equal(await row('exact_duplicates').locator('td.count').textContent(), '1');
    assert.equal(await row('duplicate_boxes').locator('td.count').textContent(), '1');
    assert.equal(await row('unannotated_images').locator('td.count').textContent(), '2');
    // The four profile charts, drawn by Chart.js on canvases.
    await until('four charts', async () => (await page.locator('.health-chart canvas').count()) === 4);
    for (const label of ['Class balance (instances)', 'Box sizes (COCO)', 'Where box centres fall', 'Image sizes']) {
      assert.equal(await page.locator(`canvas[aria-label="${label}"]`).count(), 1, label);
    }
    const drawn = await page.locator('canvas[aria-label="Class balance (instances)"]').evaluate((c: HTMLCanvasElement) => c.width > 0 && c.height > 0);
    assert.ok(drawn);
    await screenshot(page, 'health-01-report');

    // A click on a check opens the grid filtered to the affected images.
    await row('unannotated_images').locator('button.link').click();
    await until('the grid on the unannotated images', async () => /^2 images match the filters$/.test((await page.getByTestId('grid-count').textContent()) ?? ''));
    assert.equal(await page.getByTestId('ids-filter').textContent(), 'Images without annotations');
    const shown = await page.locator('.grid-cell img').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).getAttribute('src')));
    assert.deepEqual(shown.sort(), [`/api/images/${ids[0]}/thumbnail`, `/api/images/${ids[1]}/thumbnail`].sort());
    await screenshot(page, 'health-02-grid');

    // Cleaning: pick, preview, apply, revert.
    await page.goto(`${base}/projects/${projectId}?tab=health`);
    await page.getByRole('button', { name: 'Clean…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Clean the dataset' });
    await dialog.getByLabel('Remove exact duplicates').check();
    await dialog.getByLabel('Merge duplicate boxes').check();
    await dialog.getByRole('button', { name: 'Preview' }).click();
    const preview = await until('the preview', async () => ((await page.getByTestId('cleaning-preview').count()) > 0 ? ((await page.getByTestId('cleaning-preview').textContent()) ?? undefined) : undefined));
    assert.match(preview, /2 changes: 1 delete image, 1 delete annotation/);
    assert.match(preview, new RegExp(`delete image image ${ids[1]}`));
    await screenshot(page, 'health-03-preview');
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await until('the applied run', async () => /Run \d+ applied/.test((await dialog.getByRole('status').textContent()) ?? ''));
    const images = async () => (await (await page.request.get(`${base}/api/projects/${projectId}/images`)).json()).map((i: { id: number }) => i.id);
    assert.deepEqual(await images(), [ids[0], ids[2]]);
    await dialog.getByRole('button', { name: 'Revert' }).click();
    await until('the reverted run', async () => /reverted/.test((await dialog.getByRole('status').textContent()) ?? ''));
    assert.deepEqual(await images(), ids);
    assert.match((await dialog.locator('table.cleaning-history').textContent()) ?? '', /reverted/);
    await screenshot(page, 'health-04-reverted');
    assert.deepEqual(errors, []);
  });

  it('a sample check lists its samples, each a link to it on the samples page; the profile shows the samples', async () => {
    // Logged in by the test above.
    const base = server.baseUrl;
    const project = await page.request.post(`${base}/api/projects`, { data: { name: 'Reviews' } });
    const projectId = (await project.json()).id as number;
    const lines = ['Fine product, works as described.', '   ', 'Broke after a day of use.'].map((text, i) => JSON.stringify({ text, label: i === 2 ? 'neg' : 'pos' }));
    const imported = await page.request.post(`${base}/api/projects/${projectId}/import/text`, { multipart: { file: { name: 'reviews.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(lines.join('\n')) } } });
    assert.equal(imported.status(), 201, await imported.text());
    const ids = (await (await page.request.get(`${base}/api/projects/${projectId}/samples`)).json()).map((s: { id: number }) => s.id);

    await page.goto(`${base}/projects/${projectId}?tab=health`);
    const row = page.locator('tr[data-check="text_empty"]');
    await until('the empty-text row', async () => (await row.count()) > 0);
    assert.equal(await row.locator('td.count').textContent(), '1');
    await until('the samples profile', async () => (await page.getByTestId('sample-profile').count()) > 0);
    assert.equal(await page.locator('canvas[aria-label="Samples per class"]').count(), 1);
    assert.deepEqual(await page.locator('.health-samples tr[data-modality="text"] td').allTextContents(), ['text', '3', '3', '0 / 0 / 0 / 3', '25, 33, 33 characters']);
    await row.locator('button.link').click();
    const link = page.locator('tr[data-check-items="text_empty"] a');
    assert.equal(await link.textContent(), `Sample ${ids[1]}`);
    await screenshot(page, 'health-05-sample-items');
    await link.click();
    await until('the empty text opened on the samples page', async () => (await page.getByTestId('position').count()) > 0 && (await page.getByTestId('position').textContent()) === '2 / 3');
    assert.equal(new URL(page.url()).pathname, `/projects/${projectId}/samples`);
    assert.deepEqual(errors, []);
  });
});
