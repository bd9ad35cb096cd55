/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';
import { apiCaller, livePageSuite, screenshot, SKIP_REASON, until, signInNewUser } from '../browser/browser-harness.js';

/**
 * The experiment page (issue 28): from the experiments list to a short detector run's page (per-class table, PR
 * curves, confusion matrix with background), then an image of its error browser opened in the editor with the run's
 * predictions drawn dashed beside the ground truth.
 */
describe('the experiment page and its error browser', { skip: SKIP_REASON ?? false, timeout: 10 * 60_000 }, () => {
  const live = livePageSuite();

  it('shows the per-class table and charts, and opens an error in the editor with the predictions', async () => {
    const base = live.server.baseUrl;
    const call = apiCaller(() => live.page, () => base);
    await signInNewUser(call, 'ines@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Shapes', project_type: 'object_detection' })).id;
    const classIds = new Map<string, number>();
    for (const c of SHAPE_CLASSES) classIds.set(c.name, (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: c.name })).id);
    const images = await generateDataset('evaluation', 30, { width: 96, height: 80, count: [1, 3], masks: false, format: 'jpeg' });
    for (const image of images) {
      const res = await live.page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: image.filename, mimeType: 'image/jpeg', buffer: image.data } } });
      assert.equal(res.status(), 201, await res.text());
      const id = (await res.json()).images[0].id as number;
      for (const shape of image.shapes) await call('post', `/api/images/${id}/annotations`, { class_id: classIds.get(shape.className), annotation_type: 'bbox', geometry: shape.bbox });
    }
    const version = await call<{ id: number }>('post', `/api/projects/${projectId}/versions`, { name: 'v1', split_config: { train: 60, valid: 40, test: 0 }, seed: 3 });
    await live.server.versa.deps.queue.drain();
    const job = await call<{ id: number; experiment_id: number }>('post', `/api/projects/${projectId}/train`, {
      version_id: version.id, model: 'versa-detect-n', epochs: 15, imgsz: 64, batch: 8, seed: 1, device: 'cpu', require_ready: false,
    }, 202);
    await until('the run to finish', async () => {
      const status = (await call<{ status: string }>('get', `/api/train/jobs/${job.id}`)).status;
      assert.ok(!['failed', 'cancelled'].includes(status), status);
      return status === 'succeeded';
    }, 5 * 60_000);

    await live.page.goto(`${base}/projects/${projectId}?tab=experiments`);
    await live.page.getByRole('link', { name: /versa-detect v1/ }).click();
    await live.page.waitForURL(`**/projects/${projectId}/experiments/${job.experiment_id}`);
    const table = live.page.getByTestId('per-class');
    await table.waitFor();
    assert.equal(await table.locator('tbody tr').count(), SHAPE_CLASSES.length);
    assert.match(await table.locator('thead').innerText(), /F1 threshold/);
    const pr = live.page.getByTestId('pr-curves');
    await pr.waitFor();
    assert.ok((await pr.boundingBox())!.height > 50, 'the PR chart is drawn');
    assert.match(await live.page.getByTestId('confusion').innerText(), /background/);
    await screenshot(live.page, 'experiment-page');

    // An image with live.errors that the run also predicted something on, opened from its row.
    const ranked = await call<{ images: { image_id: number; predictions: unknown[] }[] }>('get', `/api/experiments/${job.experiment_id}/errors?split=valid&limit=100`);
    const chosen = ranked.images.find((i) => i.predictions.length > 0);
    assert.ok(chosen, 'the run predicted something on an image it got wrong');
    const row = live.page.getByTestId('errors').locator('tbody tr').filter({ has: live.page.locator('td:first-child', { hasText: new RegExp(`^${chosen.image_id}$`) }) });
    await row.getByRole('link', { name: 'Open in editor' }).click();
    await live.page.waitForURL(/\/annotate\?.*experiment=\d+/);
    const imageId = Number(new URL(live.page.url()).searchParams.get('image'));
    const panel = live.page.getByTestId('experiment-predictions');
    await panel.waitFor();
    await until('the editor opens the error image', async () => (await live.page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageId);
    const truth = await call<unknown[]>('get', `/api/images/${imageId}/annotations`);
    await until('the ground truth is drawn', async () => (await panel.locator('[data-kind="truth"]').count()) === truth.length);
    const run = await call<{ images: { image_id: number; predictions: unknown[] }[] }>('get', `/api/experiments/${job.experiment_id}/errors?split=valid&limit=500`);
    const predicted = run.images.find((i) => i.image_id === imageId)!.predictions.length;
    assert.ok(predicted > 0);
    await until('the predictions are drawn dashed', async () => (await panel.locator('[data-kind="prediction"] rect[stroke-dasharray]').count()) === predicted);
    await screenshot(live.page, 'experiment-error-in-editor');
    assert.deepEqual(live.errors, []);
  });
});
