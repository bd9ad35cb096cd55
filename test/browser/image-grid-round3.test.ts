/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ppeImage } from '../helpers/ppe.js';
import { apiCaller, livePageSuite, SKIP_REASON, screenshot, signInNewUser, until } from './browser-harness.js';

/** Issue 30, item 10: the project grid's thumbnails show their shapes, and images can be picked in bulk. */
describe('Project image grid, round 3 (issue 30, item 10)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const call = apiCaller(() => live.page, () => live.server.baseUrl);

  it('draws each thumbnail\'s shapes, and selects images to set their split and delete them', async () => {
    const { page, server } = live;
    await signInNewUser(call, 'ada@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Chess' })).id;
    for (let i = 0; i < 3; i++) {
      const res = await page.request.post(`${server.baseUrl}/api/projects/${projectId}/images`, { multipart: { files: { name: `p${i}.png`, mimeType: 'image/png', buffer: await ppeImage(i, { helmet: true, vest: true }) } } });
      assert.equal(res.status(), 201, await res.text());
    }
    const images = await call<{ id: number }[]>('get', `/api/projects/${projectId}/images`);
    const cls = await call<{ id: number; color: string }>('post', `/api/projects/${projectId}/classes`, { name: 'pawn' });
    for (const geometry of [{ x: 10, y: 10, width: 40, height: 40 }, { x: 60, y: 60, width: 30, height: 30 }]) {
      await call('post', `/api/images/${images[0].id}/annotations`, { class_id: cls.id, annotation_type: 'bbox', geometry });
    }
    await page.goto(`${server.baseUrl}/projects/${projectId}`);
    const cell = page.locator(`a.grid-cell[href*="image=${images[0].id}"], a.grid-cell:has(img[src="/api/images/${images[0].id}/thumbnail"])`).first();
    await until('the overlay of the annotated image', async () => (await cell.locator('[data-testid=thumb-overlay] rect').count()) === 2);
    assert.equal(await cell.locator('rect').first().getAttribute('stroke'), cls.color);
    assert.equal(await page.locator('[data-testid=thumb-overlay]').count(), 1, 'images without shapes have no overlay');
    await screenshot(page, 'grid-r3-01-overlays');

    // Bulk: pick two images, set their split; then pick all and delete them.
    await page.getByRole('button', { name: 'Select', exact: true }).click();
    const bar = page.getByTestId('grid-select-bar');
    await bar.waitFor();
    for (const image of images.slice(0, 2)) await page.locator(`button.grid-cell[data-image-id="${image.id}"]`).click();
    assert.match(await bar.innerText(), /2 selected/);
    await bar.getByLabel('Set the split of the selected images').selectOption('valid');
    await until('the split set', async () => {
      const list = await call<{ id: number; split: string | null }[]>('get', `/api/projects/${projectId}/images`);
      return list.filter((i) => i.split === 'valid').map((i) => i.id).sort().join() === images.slice(0, 2).map((i) => i.id).sort().join();
    });
    await until('the selection cleared', async () => /0 selected/.test(await bar.innerText()));
    await screenshot(page, 'grid-r3-02-select');
    page.once('dialog', (d) => void d.accept());
    await bar.getByRole('button', { name: 'Select all shown' }).click();
    await bar.getByRole('button', { name: 'Delete selected' }).click();
    await until('every image deleted', async () => (await call<unknown[]>('get', `/api/projects/${projectId}/images`)).length === 0);
    assert.deepEqual(live.errors, []);
  });
});
