/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ppeImage } from '../helpers/ppe.js';
import { apiCaller, livePageSuite, SKIP_REASON, screenshot, signInNewUser, until } from './browser-harness.js';

function hexToRgb(hex: string): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

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
    // Both boxes in one outline path of their class (a few paths per class, whatever the number of shapes).
    await until('the overlay of the annotated image', async () => (await cell.locator('[data-testid=thumb-overlay] path[data-part=outline]').count()) === 1);
    const outline = cell.locator('[data-testid=thumb-overlay] path[data-part=outline]');
    assert.equal(await outline.getAttribute('stroke'), cls.color);
    assert.equal(await outline.getAttribute('d'), 'M10 10h40v40h-40ZM60 60h30v30h-30Z');
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

  it('draws polygons, masks, rotated boxes, ellipses, polylines, points and keypoints as their shapes, and classes as chips (issue 30)', async () => {
    const { page, server } = live;
    // The suite's server already has its admin (the test above): a second user signs in.
    await call('post', '/api/auth/register', { email: 'grace@example.com', password: 'correct horse battery' });
    await call('post', '/api/auth/login', { email: 'grace@example.com', password: 'correct horse battery' }, 200);
    const upload = async (projectId: number, name: string, variant = 1) => {
      const res = await page.request.post(`${server.baseUrl}/api/projects/${projectId}/images`, { multipart: { files: { name, mimeType: 'image/png', buffer: await ppeImage(variant, { helmet: true, vest: false }) } } });
      assert.equal(res.status(), 201, await res.text());
      return ((await res.json()) as { images: { id: number; width: number; height: number }[] }).images[0];
    };
    const shapesProject = (await call<{ id: number }>('post', '/api/projects', { name: 'Shapes', project_type: 'instance_segmentation' })).id;
    const image = await upload(shapesProject, 'shapes.png');
    const piece = await call<{ id: number; color: string }>('post', `/api/projects/${shapesProject}/classes`, { name: 'piece' });
    const person = await call<{ id: number; color: string }>('post', `/api/projects/${shapesProject}/classes`, {
      name: 'person', skeleton: { points: ['a', 'b', 'c'], edges: [[0, 1], [1, 2]], flip_pairs: [] },
    });
    const add = (class_id: number, annotation_type: string, geometry: object, extra: object = {}) =>
      call('post', `/api/images/${image.id}/annotations`, { class_id, annotation_type, geometry, ...extra });
    // Two parts and a hole: one object.
    await add(piece.id, 'polygon', { points: [[10, 10], [50, 10], [30, 40]], parts: [[[10, 10], [50, 10], [30, 40]], [[60, 10], [90, 10], [75, 40]]], holes: [[[25, 15], [35, 15], [30, 25]]] });
    await add(piece.id, 'bbox', { x: 20, y: 50, width: 40, height: 20, rotation: 30 });
    await add(piece.id, 'ellipse', { cx: 80, cy: 80, rx: 10, ry: 5, rotation: 0 });
    await add(piece.id, 'polyline', { points: [[5, 90], [40, 95]] });
    await add(piece.id, 'points', { points: [[50, 50]] });
    // A 12 × 12 block at the image's top-left corner, as COCO RLE (column-major).
    const [h, w] = [image.height, image.width];
    const counts = [0, 12, ...Array.from({ length: 11 }, () => [h - 12, 12]).flat(), h - 12 + (w - 12) * h];
    await add(piece.id, 'mask', { rle: { size: [h, w], counts } });
    await add(person.id, 'keypoints', { points: [[10, 60, 2], [20, 70, 2], [30, 60, 2]] }, { status: 'suggested', source: 'model:1', confidence: 0.5 });

    await page.goto(`${server.baseUrl}/projects/${shapesProject}`);
    const overlay = page.locator('[data-testid=thumb-overlay]');
    await until('the shapes drawn', async () => (await overlay.locator('g').count()) === 2);
    const piecePaths = overlay.locator(`g[data-class-color="${piece.color}"]`);
    assert.deepEqual((await piecePaths.getAttribute('data-types'))!.split(' ').sort(), ['bbox', 'ellipse', 'mask', 'points', 'polygon', 'polyline']);
    const outline = (await piecePaths.locator('path[data-part=outline]').getAttribute('d'))!;
    // Polygon parts and hole, the rotated box's corners (not its upright box), the ellipse's arcs, the open polyline.
    assert.ok(outline.startsWith('M10 10L50 10L30 40ZM60 10L90 10L75 40ZM25 15L35 15L30 25Z'), outline);
    assert.match(outline, /M\d+(\.\d+)? \d+(\.\d+)?L[^Z]*Z/);
    assert.ok(!outline.includes('M20 50h40v20'), 'a rotated box is not drawn upright');
    assert.match(outline, /A10 5 0 1 1 70 80A10 5 0 1 1 90 80Z/);
    assert.match(outline, /M5 90L40 95/);
    const fill = (await piecePaths.locator('path[data-part=fill]').getAttribute('d'))!;
    assert.ok(fill.includes('M0 0h12v3h-12Z'), `the mask's cells: ${fill.slice(0, 200)}`);
    assert.ok((await piecePaths.locator('path[data-part=dots]').count()) === 1);
    const skeleton = overlay.locator(`g[data-class-color="${person.color}"]`);
    assert.equal(await skeleton.getAttribute('data-suggested'), 'true');
    assert.equal(await skeleton.locator('path[data-part=outline]').getAttribute('d'), 'M10 60L20 70M20 70L30 60');
    assert.ok(await skeleton.locator('path[data-part=outline]').getAttribute('stroke-dasharray'));
    await screenshot(page, 'grid-r3-03-shapes');

    // A classification project (multi-label): the classes as chips over the thumbnail, a suggested one marked.
    const pets = (await call<{ id: number }>('post', '/api/projects', { name: 'Pets', project_type: 'classification', multi_label: true })).id;
    const cat = await call<{ id: number; color: string }>('post', `/api/projects/${pets}/classes`, { name: 'cat' });
    const dog = await call<{ id: number; color: string }>('post', `/api/projects/${pets}/classes`, { name: 'dog' });
    const labelled = await upload(pets, 'cat.png');
    await upload(pets, 'none.png', 3);
    const suggestedOnly = await upload(pets, 'dog.png', 4);
    await call('post', `/api/images/${labelled.id}/annotations`, { class_id: cat.id, annotation_type: 'classification', geometry: {} });
    await call('post', `/api/images/${labelled.id}/annotations`, { class_id: dog.id, annotation_type: 'classification', geometry: {}, status: 'suggested', source: 'model:1', confidence: 0.7 });
    // An image whose only class is a suggestion: no accepted annotation, yet its thumbnail shows the suggestion.
    await call('post', `/api/images/${suggestedOnly.id}/annotations`, { class_id: dog.id, annotation_type: 'classification', geometry: {}, status: 'suggested', source: 'model:1', confidence: 0.6 });
    const listed = await call<{ id: number; annotation_count: number; suggestion_count: number }[]>('get', `/api/projects/${pets}/images`);
    assert.deepEqual(listed.map((i) => [i.annotation_count, i.suggestion_count]), [[1, 1], [0, 0], [0, 1]]);
    await page.goto(`${server.baseUrl}/projects/${pets}`);
    const onlySuggested = page.locator(`a.grid-cell:has(img[src="/api/images/${suggestedOnly.id}/thumbnail"]) [data-testid=thumb-classes] .chip`);
    await until('the suggestion-only thumbnail\'s chip', async () => (await onlySuggested.count()) === 1);
    assert.equal(await onlySuggested.innerText(), 'dog?');
    assert.equal(await onlySuggested.evaluate((el) => getComputedStyle(el).borderTopStyle), 'dashed');
    const chips = page.locator(`a.grid-cell:has(img[src="/api/images/${labelled.id}/thumbnail"])`).getByTestId('thumb-classes');
    await until('the labelled thumbnail\'s chips', async () => (await chips.locator('.chip').count()) === 2);
    assert.equal(await page.getByTestId('thumb-classes').count(), 2, 'an image without a class has no chip');
    assert.deepEqual(await chips.locator('.chip').allInnerTexts(), ['cat', 'dog?']);
    assert.equal(await chips.locator('.chip').first().getAttribute('data-class-id'), String(cat.id));
    assert.match((await chips.locator('.chip').nth(1).getAttribute('class'))!, /suggested/);
    assert.equal(await chips.locator('.chip').first().evaluate((el) => getComputedStyle(el).borderTopColor), hexToRgb(cat.color));
    assert.equal(await page.locator('[data-testid=thumb-overlay]').count(), 0, 'a class has no shape to draw');
    await screenshot(page, 'grid-r3-04-classes');
    assert.deepEqual(live.errors, []);
  });
});
