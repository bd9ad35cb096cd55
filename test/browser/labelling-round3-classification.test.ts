/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { apiCaller, livePageSuite, screenshot, signInNewUser, SKIP_REASON, until } from './browser-harness.js';

/**
 * Issue 30, item 7, in Chromium: a single-label classification project replaces the image's class on a class key,
 * a multi-label one toggles classes; the class(es) are shown on the image in the editor.
 */
describe('labelling round 3: single- and multi-label classification (issue 30, item 7)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  it('single-label: a class key replaces the class; multi-label (set in the editor): keys toggle; the classes show on the image', async () => {
    const page = live.page;
    await signInNewUser(call, 'ada@example.com');
    const projectId = (await call<{ id: number; multi_label: boolean }>('post', '/api/projects', { name: 'Pets', project_type: 'classification' })).id;
    const cat = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'cat' })).id;
    const dog = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'dog' })).id;
    const png = await squaresPng(128, 128, [{ x: 10, y: 10, width: 30, height: 30, colour: [255, 0, 0] }]);
    const res = await page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name: 'pet.png', mimeType: 'image/png', buffer: png } } });
    assert.equal(res.status(), 201, await res.text());
    const imageId = (await res.json()).images[0].id as number;
    const stored = async () =>
      ((await (await page.request.get(`${base()}/api/images/${imageId}/annotations`)).json()) as { class_id: number; annotation_type: string }[])
        .filter((a) => a.annotation_type === 'classification')
        .map((a) => a.class_id)
        .sort((a, b) => a - b);
    const shown = async () => (await page.getByTestId('image-classes').locator('.chip').allTextContents()).sort();

    await page.goto(`${base()}/projects/${projectId}/annotate?image=${imageId}`);
    await until('the editor', async () => (await page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageId);
    assert.deepEqual(await shown(), ['No class yet (a class key sets it)']);
    await page.getByTestId('editor-canvas').focus();

    await page.keyboard.press('1');
    await until('cat shown and stored', async () => JSON.stringify(await shown()) === '["cat"]' && JSON.stringify(await stored()) === JSON.stringify([cat]));
    await page.keyboard.press('2');
    await until('dog replaces cat', async () => JSON.stringify(await shown()) === '["dog"]' && JSON.stringify(await stored()) === JSON.stringify([dog]));
    await screenshot(page, 'round3-classification-single');

    // Multi-label, chosen in the editor: the keys toggle.
    await page.getByLabel('Several classes per image (multi-label)').check();
    await until('the project multi-label', async () => (await call<{ multi_label: boolean }>('get', `/api/projects/${projectId}`)).multi_label);
    await page.getByTestId('editor-canvas').focus();
    await page.keyboard.press('1');
    await until('cat and dog', async () => JSON.stringify(await shown()) === '["cat","dog"]' && JSON.stringify(await stored()) === JSON.stringify([cat, dog].sort((a, b) => a - b)));
    await page.keyboard.press('2');
    await until('dog toggled off', async () => JSON.stringify(await shown()) === '["cat"]' && JSON.stringify(await stored()) === JSON.stringify([cat]));
    await screenshot(page, 'round3-classification-multi');
    assert.deepEqual(live.errors, []);
  });
});
