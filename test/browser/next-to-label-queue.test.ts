/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { apiCaller, closeLivePage, openLivePage, SKIP_REASON, type Browser, type LiveServer, signInNewUser } from './browser-harness.js';

/** A red square the test detector is sure of at level 255 and unsure of near 130 (its score is the red level / 255). */
const redSquare = (level: number) => squaresPng(128, 128, [{ x: 20, y: 20, width: 30, height: 30, colour: [level, 0, 0] }]);

describe('the editor\'s queue follows next-to-label', { skip: SKIP_REASON ?? false }, () => {
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

  it('switches Next from upload order to the least sure images first', async () => {
    const base = server.baseUrl;
    const call = apiCaller(() => page, () => base);
    await signInNewUser(call, 'lena@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Queue' })).id;
    for (const [name, level] of [['sure', 255], ['unsure', 140], ['fair', 200]] as const) {
      const res = await page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: `${name}.png`, mimeType: 'image/png', buffer: await redSquare(level) } } });
      assert.equal(res.status(), 201, await res.text());
    }
    const model = await page.request.post(`${base}/api/projects/${projectId}/models/upload`, {
      multipart: { file: { name: 'colours.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from(buildYoloModel('v8')) }, name: 'colours' },
    });
    assert.equal(model.status(), 201, await model.text());
    const promoted = await page.request.patch(`${base}/api/models/${(await model.json()).id}/lifecycle`, { data: { lifecycle: 'production' } });
    assert.equal(promoted.status(), 200, await promoted.text());

    await page.goto(`${base}/projects/${projectId}/annotate`);
    const position = page.getByTestId('image-position');
    await position.filter({ hasText: '1 / 3 · sure.png' }).waitFor();
    await page.getByLabel('Queue order').selectOption('entropy');
    await position.filter({ hasText: '1 / 3 · unsure.png' }).waitFor();
    assert.match(page.url(), /order=entropy/);
    await page.getByRole('button', { name: /Next/ }).click();
    await position.filter({ hasText: '2 / 3 · fair.png' }).waitFor();
    // The order is kept in the URL: opening it again follows the same ranking.
    await page.reload();
    await position.filter({ hasText: '2 / 3 · fair.png' }).waitFor();
    assert.deepEqual(errors, []);
  });
});
