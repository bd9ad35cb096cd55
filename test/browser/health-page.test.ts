/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { livePageSuite, SKIP_REASON, screenshot, until } from './browser-harness.js';

const noisePng = (seed: number, level: number) => {
  const data = Buffer.alloc(96 * 64 * 3);
  let s = seed * 2654435761;
  for (let i = 0; i < data.length; i++) data[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
  return sharp(data, { raw: { width: 96, height: 64, channels: 3 } }).png({ compressionLevel: level }).toBuffer();
};

describe('Health tab in Chromium', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();

  it('shows the score, readiness, checks and charts; a check opens the grid on its images; cleaning previews, applies and reverts', async () => {
    const base = live.server.baseUrl;
    const post = async <T>(url: string, data: unknown, status = 201): Promise<T> => {
      const res = await live.page.request.post(base + url, { data: data as object });
      assert.equal(res.status(), status, `${url}: ${await res.text()}`);
      return (await res.json()) as T;
    };
    await post('/api/auth/register', { email: 'hedy@example.com', password: 'correct horse battery' });
    await post('/api/auth/login', { email: 'hedy@example.com', password: 'correct horse battery' }, 200);
    const { id: projectId } = await post<{ id: number }>('/api/projects', { name: 'Noisy' });
    const files = [await noisePng(1, 9), await noisePng(1, 1), await noisePng(2, 6)];
    const ids: number[] = [];
    for (const [i, buffer] of files.entries()) {
      const res = await live.page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: `n-${i}.png`, mimeType: 'image/png', buffer } } });
      assert.equal(res.status(), 201, await res.text());
      ids.push((await res.json()).images[0].id);
    }
    const { id: classId } = await post<{ id: number }>(`/api/projects/${projectId}/classes`, { name: 'speck' });
    await post(`/api/images/${ids[2]}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 30, height: 20 } });
    await post(`/api/images/${ids[2]}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 30, height: 21 } });

    await live.page.goto(`${base}/projects/${projectId}?tab=health`);
    const score = await until('the health score', async () => {
      const text = await live.page.getByTestId('health-score').textContent();
      return text && /\d+\/100/.test(text) ? text : undefined;
    });
    assert.match(score, /Health \d+\/100/);
    assert.match((await live.page.getByTestId('readiness').textContent()) ?? '', /Readiness for versa-detect: \d+\/100/);
    const row = (id: string) => live.page.locator(`tr[data-check="${id}"]`);
    await until('the exact-duplicate row', async () => (await row('exact_duplicates').count()) > 0);
    assert.equal(await row('exact_duplicates').locator('td.count').textContent(), '1');
    assert.equal(await row('duplicate_boxes').locator('td.count').textContent(), '1');
    assert.equal(await row('unannotated_images').locator('td.count').textContent(), '2');
    // The four profile charts, drawn by Chart.js on canvases.
    await until('four charts', async () => (await live.page.locator('.health-chart canvas').count()) === 4);
    for (const label of ['Class balance (instances)', 'Box sizes (COCO)', 'Where box centres fall', 'Image sizes']) {
      assert.equal(await live.page.locator(`canvas[aria-label="${label}"]`).count(), 1, label);
    }
    const drawn = await live.page.locator('canvas[aria-label="Class balance (instances)"]').evaluate((c: HTMLCanvasElement) => c.width > 0 && c.height > 0);
    assert.ok(drawn);
    await screenshot(live.page, 'health-01-report');

    // A click on a check opens the grid filtered to the affected images.
    await row('unannotated_images').locator('button.link').click();
    await until('the grid on the unannotated images', async () => /^2 images match the filters$/.test((await live.page.getByTestId('grid-count').textContent()) ?? ''));
    assert.equal(await live.page.getByTestId('ids-filter').textContent(), 'Images without annotations');
    const shown = await live.page.locator('.grid-cell img').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).getAttribute('src')));
    assert.deepEqual(shown.sort(), [`/api/images/${ids[0]}/thumbnail`, `/api/images/${ids[1]}/thumbnail`].sort());
    await screenshot(live.page, 'health-02-grid');

    // Cleaning: pick, preview, apply, revert.
    await live.page.goto(`${base}/projects/${projectId}?tab=health`);
    await live.page.getByRole('button', { name: 'Clean…' }).click();
    const dialog = live.page.getByRole('dialog', { name: 'Clean the dataset' });
    await dialog.getByLabel('Remove exact duplicates').check();
    await dialog.getByLabel('Merge duplicate boxes').check();
    await dialog.getByRole('button', { name: 'Preview' }).click();
    const preview = await until('the preview', async () => ((await live.page.getByTestId('cleaning-preview').count()) > 0 ? ((await live.page.getByTestId('cleaning-preview').textContent()) ?? undefined) : undefined));
    assert.match(preview, /2 changes: 1 delete image, 1 delete annotation/);
    assert.match(preview, new RegExp(`delete image image ${ids[1]}`));
    await screenshot(live.page, 'health-03-preview');
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await until('the applied run', async () => /Run \d+ applied/.test((await dialog.getByRole('status').textContent()) ?? ''));
    const images = async () => (await (await live.page.request.get(`${base}/api/projects/${projectId}/images`)).json()).map((i: { id: number }) => i.id);
    assert.deepEqual(await images(), [ids[0], ids[2]]);
    await dialog.getByRole('button', { name: 'Revert' }).click();
    await until('the reverted run', async () => /reverted/.test((await dialog.getByRole('status').textContent()) ?? ''));
    assert.deepEqual(await images(), ids);
    assert.match((await dialog.locator('table.cleaning-history').textContent()) ?? '', /reverted/);
    await screenshot(live.page, 'health-04-reverted');
    assert.deepEqual(live.errors, []);
  });

  it('a sample check lists its samples, each a link to it on the samples page; the profile shows the samples', async () => {
    // Logged in by the test above.
    const base = live.server.baseUrl;
    const project = await live.page.request.post(`${base}/api/projects`, { data: { name: 'Reviews' } });
    const projectId = (await project.json()).id as number;
    const lines = ['Fine product, works as described.', '   ', 'Broke after a day of use.'].map((text, i) => JSON.stringify({ text, label: i === 2 ? 'neg' : 'pos' }));
    const imported = await live.page.request.post(`${base}/api/projects/${projectId}/import/text`, { multipart: { file: { name: 'reviews.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(lines.join('\n')) } } });
    assert.equal(imported.status(), 201, await imported.text());
    const ids = (await (await live.page.request.get(`${base}/api/projects/${projectId}/samples`)).json()).map((s: { id: number }) => s.id);

    await live.page.goto(`${base}/projects/${projectId}?tab=health`);
    const row = live.page.locator('tr[data-check="text_empty"]');
    await until('the empty-text row', async () => (await row.count()) > 0);
    assert.equal(await row.locator('td.count').textContent(), '1');
    await until('the samples profile', async () => (await live.page.getByTestId('sample-profile').count()) > 0);
    assert.equal(await live.page.locator('canvas[aria-label="Samples per class"]').count(), 1);
    assert.deepEqual(await live.page.locator('.health-samples tr[data-modality="text"] td').allTextContents(), ['text', '3', '3', '0 / 0 / 0 / 3', '25, 33, 33 characters']);
    await row.locator('button.link').click();
    const link = live.page.locator('tr[data-check-items="text_empty"] a');
    assert.equal(await link.textContent(), `Sample ${ids[1]}`);
    await screenshot(live.page, 'health-05-sample-items');
    await link.click();
    await until('the empty text opened on the samples page', async () => (await live.page.getByTestId('position').count()) > 0 && (await live.page.getByTestId('position').textContent()) === '2 / 3');
    assert.equal(new URL(live.page.url()).pathname, `/projects/${projectId}/samples`);
    assert.deepEqual(live.errors, []);
  });
});
