/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { apiCaller, livePageSuite, screenshot, signInNewUser, SKIP_REASON, until } from './browser-harness.js';

/** Distinct noise images (no near duplicates among them). */
const noisePng = (seed: number) => {
  const data = Buffer.alloc(96 * 64 * 3);
  let s = seed * 2654435761;
  for (let i = 0; i < data.length; i++) data[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
  return sharp(data, { raw: { width: 96, height: 64, channels: 3 } }).png().toBuffer();
};

/**
 * Issue 30, item 5, in Chromium: the Health tab says in words why readiness blocks training ("3 images of 5 have no
 * labels — …") and offers each fix: a link to the unlabelled images, and the cleaning dialog on its action.
 */
describe('labelling round 3: a blocked gate explained (issue 30, item 5)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  it('names what blocks and links each fix', async () => {
    const page = live.page;
    await signInNewUser(call, 'ada@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Gate' })).id;
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name: `n-${i}.png`, mimeType: 'image/png', buffer: await noisePng(i + 1) } } });
      assert.equal(res.status(), 201, await res.text());
      ids.push((await res.json()).images[0].id);
    }
    const cls = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'speck' })).id;
    for (const id of ids.slice(0, 2)) await call('post', `/api/images/${id}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: { x: 10, y: 10, width: 30, height: 20 } });

    await page.goto(`${base()}/projects/${projectId}?tab=health`);
    const why = page.getByTestId('readiness-why');
    await why.waitFor();
    assert.match((await why.textContent()) ?? '', /Why training is blocked/);
    const unlabelled = why.locator('li[data-readiness-check="annotated_fraction"]');
    assert.match((await unlabelled.textContent()) ?? '', /3 images of 5 have no labels — label them, or remove them from the project/);
    assert.match((await why.locator('li[data-readiness-check="min_instances_per_class"]').textContent()) ?? '', /speck — label more images with these classes/);
    await screenshot(page, 'round3-readiness-why');

    // The cleaning fix opens the dialog with its action chosen.
    await unlabelled.getByRole('button', { name: 'Remove unannotated images…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Clean the dataset' });
    await dialog.waitFor();
    await until('the action chosen', async () => (await dialog.getByLabel('Remove or mark unannotated images').count()) > 0 && (await dialog.getByLabel('Remove or mark unannotated images').isChecked()));
    await dialog.getByRole('button', { name: 'Close' }).click();

    // The labelling fix opens the grid on the three unlabelled images.
    await unlabelled.getByRole('link', { name: 'Show the unlabelled images' }).click();
    await until('the grid on the unlabelled images', async () => /^3 images match the filters$/.test((await page.getByTestId('grid-count').textContent()) ?? ''));
    const shown = await page.locator('.grid-cell img').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).getAttribute('src')));
    assert.deepEqual(shown.sort(), ids.slice(2).map((id) => `/api/images/${id}/thumbnail`).sort());

    // A viewer reads the same words but is offered no fix their role cannot use.
    await call('post', '/api/auth/register', { email: 'vic@example.com', password: 'correct horse battery' });
    await call('post', `/api/projects/${projectId}/members`, { email: 'vic@example.com', role: 'viewer' });
    await call('post', '/api/auth/login', { email: 'vic@example.com', password: 'correct horse battery' }, 200);
    await page.goto(`${base()}/projects/${projectId}?tab=health`);
    const seen = page.getByTestId('readiness-why').locator('li[data-readiness-check="annotated_fraction"]');
    await seen.waitFor();
    assert.match((await seen.textContent()) ?? '', /3 images of 5 have no labels/);
    await until('the role known', async () => (await page.getByTestId('readiness-why').getByRole('link', { name: 'Open the editor' }).count()) === 0);
    assert.equal(await seen.getByRole('button', { name: 'Remove unannotated images…' }).count(), 0);
    assert.equal(await seen.getByRole('link', { name: 'Show the unlabelled images' }).count(), 1, 'looking is open to every role');
    assert.deepEqual(live.errors, []);
  });
});
