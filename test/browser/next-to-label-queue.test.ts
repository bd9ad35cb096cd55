/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { apiCaller, livePageSuite, SKIP_REASON, signInNewUser } from './browser-harness.js';

/** A red square the test detector is sure of at level 255 and unsure of near 130 (its score is the red level / 255). */
const redSquare = (level: number) => squaresPng(128, 128, [{ x: 20, y: 20, width: 30, height: 30, colour: [level, 0, 0] }]);

describe('the editor\'s queue follows next-to-label', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();

  it('switches Next from upload order to the least sure images first', async () => {
    const base = live.server.baseUrl;
    const call = apiCaller(() => live.page, () => base);
    await signInNewUser(call, 'lena@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Queue' })).id;
    for (const [name, level] of [['sure', 255], ['unsure', 140], ['fair', 200]] as const) {
      const res = await live.page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: `${name}.png`, mimeType: 'image/png', buffer: await redSquare(level) } } });
      assert.equal(res.status(), 201, await res.text());
    }
    const model = await live.page.request.post(`${base}/api/projects/${projectId}/models/upload`, {
      multipart: { file: { name: 'colours.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from(buildYoloModel('v8')) }, name: 'colours' },
    });
    assert.equal(model.status(), 201, await model.text());
    const promoted = await live.page.request.patch(`${base}/api/models/${(await model.json()).id}/lifecycle`, { data: { lifecycle: 'production' } });
    assert.equal(promoted.status(), 200, await promoted.text());

    await live.page.goto(`${base}/projects/${projectId}/annotate`);
    const position = live.page.getByTestId('image-position');
    await position.filter({ hasText: '1 / 3 · sure.png' }).waitFor();
    await live.page.getByLabel('Queue order').selectOption('entropy');
    await position.filter({ hasText: '1 / 3 · unsure.png' }).waitFor();
    assert.match(live.page.url(), /order=entropy/);
    await live.page.getByRole('button', { name: /Next/ }).click();
    await position.filter({ hasText: '2 / 3 · fair.png' }).waitFor();
    // The order is kept in the URL: opening it again follows the same ranking.
    await live.page.reload();
    await position.filter({ hasText: '2 / 3 · fair.png' }).waitFor();
    assert.deepEqual(live.errors, []);
  });
});
