/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { livePageSuite, apiCaller, SKIP_REASON, until, signInNewUser } from './browser-harness.js';

/**
 * Suggestions waiting (issue 28): with a production model, the editor has the images ahead predicted in the
 * background, so the next image opens with its suggestions (no "Run detector"); a class key on a selected
 * suggestion accepts it as that class and moves on to the next one.
 */
describe('suggestions waiting in the editor, accepted with class keys', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();

  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  it('the open image and the next get suggestions without "Run detector", the first selected; one class key per box accepts them as that class', async () => {
    await signInNewUser(call, 'lena@example.com');
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Suggestions' })).id;
    await call('post', `/api/projects/${projectId}/classes`, { name: 'cat' });
    const dog = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'dog' })).id;
    const imageIds: number[] = [];
    for (let i = 0; i < 3; i++) {
      // The test model finds red squares as class 0 (cat) and green ones as class 1 (dog).
      const png = await squaresPng(128, 128, [{ x: 10 + i * 5, y: 10, width: 30, height: 30, colour: [255, 0, 0] }, { x: 70, y: 70, width: 30, height: 30, colour: [0, 255, 0] }]);
      const res = await live.page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name: `img-${i}.png`, mimeType: 'image/png', buffer: png } } });
      assert.equal(res.status(), 201, await res.text());
      imageIds.push((await res.json()).images[0].id);
    }
    const model = await live.page.request.post(`${base()}/api/projects/${projectId}/models/upload`, {
      multipart: { file: { name: 'pets.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from(buildYoloModel('v8', { width: 128, height: 128 }, ['cat', 'dog'])) }, name: 'pets' },
    });
    assert.equal(model.status(), 201, await model.text());
    const modelId = (await model.json()).id as number;
    const promoted = await live.page.request.patch(`${base()}/api/models/${modelId}/lifecycle`, { data: { lifecycle: 'production' } });
    assert.equal(promoted.status(), 200);

    const detectorRuns: string[] = [];
    let nextLoads = 0;
    live.page.on('request', (r) => {
      if (r.url().includes('/auto-annotate/')) detectorRuns.push(r.url());
    });
    live.page.on('response', async (r) => {
      if (!r.url().includes(`/api/images/${imageIds[1]}/annotations`)) return;
      if (((await r.json().catch(() => [])) as unknown[]).length === 2) nextLoads++;
    });
    await live.page.goto(`${base()}/projects/${projectId}/annotate?image=${imageIds[0]}`);
    await until('the first image', async () => (await live.page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageIds[0]);
    // The open image is predicted too, and shown again with its suggestions (nothing was edited on it).
    const statuses = () => live.page.evaluate(() => [...(window.__versaEditor?.controller.store?.items.values() ?? [])].map((a) => (a as { status: string }).status));
    await until('the open image shown again with its two suggestions', async () => JSON.stringify(await statuses()) === JSON.stringify(['suggested', 'suggested']), 30_000);
    // The editor asked for the images ahead; once predicted, it reloads the next one with its suggestions.
    await until('the next image loaded again with its two suggestions', async () => nextLoads > 0, 30_000);

    await live.page.keyboard.press('d');
    await until('the next image', async () => (await live.page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageIds[1]);
    assert.deepEqual(await statuses(), ['suggested', 'suggested'], 'the suggestions were there when the image opened');
    const selectedStatus = await live.page.evaluate(() => {
      const c = window.__versaEditor!.controller as unknown as { selectedKey: number | null; store: { items: Map<number, { status: string }> } };
      return c.selectedKey === null ? null : c.store.items.get(c.selectedKey)!.status;
    });
    assert.equal(selectedStatus, 'suggested', 'the first suggestion is selected when the image opens');

    // Two keys for two boxes: each class key accepts the selected suggestion and moves on.
    const keys = ['2', '2'];
    for (const key of keys) await live.page.keyboard.press(key);
    const stored = async () => {
      const res = await live.page.request.get(`${base()}/api/images/${imageIds[1]}/annotations`);
      return ((await res.json()) as { status: string; class_id: number }[]).map((a) => [a.status, a.class_id]);
    };
    await until('both accepted as dog', async () => JSON.stringify(await stored()) === JSON.stringify([['accepted', dog], ['accepted', dog]]));
    const selected = await live.page.evaluate(() => (window.__versaEditor!.controller as unknown as { selectedKey: number | null }).selectedKey);
    assert.notEqual(selected, null, 'at the last suggestion the selection stays');
    await live.page.getByText('Accepted as dog').first().waitFor();
    assert.deepEqual(detectorRuns, [], 'no detector run from the editor: the suggestions were waiting');
    assert.deepEqual(live.errors, []);
  });

  it("a new project of the same owner runs the promoted model from the editor's detector list, its unmatched classes shown", async () => {
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Second batch' })).id;
    await call('post', `/api/projects/${projectId}/classes`, { name: 'dog' });
    const png = await squaresPng(128, 128, [{ x: 70, y: 70, width: 30, height: 30, colour: [0, 255, 0] }]);
    const res = await live.page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name: 'new.png', mimeType: 'image/png', buffer: png } } });
    const imageId = (await res.json()).images[0].id as number;
    await live.page.goto(`${base()}/projects/${projectId}/annotate?image=${imageId}`);
    const option = live.page.getByLabel('Detector model').locator('option');
    await until('the shared model in the detector list', async () => (await option.count()) === 1);
    assert.equal((await option.first().innerText()).trim(), 'pets (detect, from Suggestions; not here: cat)');
    await live.page.getByRole('button', { name: 'Run detector on this image' }).click();
    await until('its suggestion, as this project\'s dog', async () => (await live.page.getByTestId('detector-result').innerText().catch(() => '')).startsWith('1 found'));
    const stored = (await (await live.page.request.get(`${base()}/api/images/${imageId}/annotations`)).json()) as { status: string; source: string }[];
    assert.deepEqual(stored.map((a) => a.status), ['suggested']);
    assert.match(stored[0].source, /^model:\d+$/);
    assert.deepEqual(live.errors, []);
  });
});
