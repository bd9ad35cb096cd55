/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { encodeRle } from '../../src/imaging/rle.js';
import { livePageSuite, apiCaller, SKIP_REASON, screenshot, until } from './browser-harness.js';

/** A 400×200 image (wide: 2:1), different per seed so uploads are not merged. */
const wideImage = (seed: number) =>
  sharp({ create: { width: 400, height: 200, channels: 3, background: { r: 30 + seed * 20, g: 90, b: 160 } } }).png().toBuffer();

describe('labelling pages in Chromium: invitations, role-gated controls, assignment, review drawing, grid filters', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();

  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);
  const signIn = (email: string) => call('post', '/api/auth/login', { email, password: 'correct horse battery' }, 200);

  let projectId = 0;
  let imageIds: number[] = [];
  let classIds: number[] = [];

  it('sets up an owner with a project of wide images', async () => {
    await call('post', '/api/auth/register', { email: 'admin@example.com', password: 'correct horse battery' });
    await call('post', '/api/auth/register', { email: 'olga@example.com', password: 'correct horse battery', display_name: 'Olga' });
    await signIn('olga@example.com');
    projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Labelling' })).id;
    for (let i = 0; i < 4; i++) {
      const res = await live.page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name: `wide-${i}.png`, mimeType: 'image/png', buffer: await wideImage(i) } } });
      assert.equal(res.status(), 201, await res.text());
      imageIds.push((await res.json()).images[0].id);
    }
    classIds = [(await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'cat' })).id, (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'dog' })).id];
  });

  it('invites by link: the invitee makes an account from the link and joins with the role; a viewer sees disabled controls with reasons', async () => {
    await live.page.goto(`${base()}/projects/${projectId}?tab=members`);
    await live.page.locator('tr[data-member="olga@example.com"]').waitFor();
    await live.page.fill('input[name=member-email]', 'vera@example.com');
    await live.page.locator('select[name=member-role]').selectOption('viewer');
    await live.page.getByRole('button', { name: 'Invite by link' }).click();
    const link = await live.page.getByLabel('Invitation link').inputValue();
    assert.match(link, new RegExp(`^${base()}/invite/[A-Za-z0-9_-]+$`));
    await live.page.locator('tr[data-invitation="vera@example.com"]').filter({ hasText: 'pending' }).waitFor();
    await screenshot(live.page, 'label-01-invite-link');

    // The invitee, signed out, opens the link, chooses a password and lands in the project.
    await live.page.context().clearCookies();
    await live.page.goto(link);
    await live.page.getByText('You are invited to').waitFor();
    assert.equal(await live.page.locator('input[name=email]').inputValue(), 'vera@example.com');
    await live.page.fill('input[name=password]', 'vera long password');
    await live.page.getByRole('button', { name: 'Create account and join' }).click();
    await live.page.waitForURL(`${base()}/projects/${projectId}`);
    const me = await call<{ email: string }>('get', '/api/auth/me');
    assert.equal(me.email, 'vera@example.com');
    assert.equal((await call<{ role: string }>('get', `/api/projects/${projectId}/my-access`)).role, 'viewer');

    // As a viewer: Annotate and Upload are disabled with the reason; class and member changes are not offered.
    const annotate = live.page.getByRole('button', { name: /^Annotate/ });
    await annotate.waitFor();
    assert.equal(await annotate.isDisabled(), true);
    assert.match((await annotate.getAttribute('title')) ?? '', /Viewers cannot annotate \(you are viewer\)/);
    assert.equal(await live.page.getByRole('button', { name: /^Upload/ }).isDisabled(), true);
    assert.match(await live.page.getByTestId('classes-denied').innerText(), /Only project admins change classes/);
    assert.equal(await live.page.getByRole('button', { name: 'Add' }).count(), 0, 'no Add class button is offered');
    await live.page.getByRole('tab', { name: 'Members' }).click();
    // The tab asks for the caller's role again when it opens ("Checking your role…" until it answers).
    await live.page.getByTestId('members-denied').getByText(/Only project admins manage members/).waitFor();
    assert.equal(await live.page.getByRole('button', { name: 'Add member' }).count(), 0);
    assert.equal(await live.page.getByLabel('Role of olga@example.com').count(), 0, 'the owner has no role select');
    await screenshot(live.page, 'label-02-viewer-gated');
    // The invitation link is spent.
    assert.equal((await live.page.request.get(`${base()}/api/invitations/${link.split('/').pop()}`)).status(), 404);
  });

  it('assigns by grid selection and by count, and shows progress per person', async () => {
    await signIn('olga@example.com');
    await call('post', '/api/auth/register', { email: 'ann@example.com', password: 'correct horse battery', display_name: 'Ann' });
    await call('post', `/api/projects/${projectId}/members`, { email: 'ann@example.com', role: 'annotator' });
    await live.page.goto(`${base()}/projects/${projectId}/assign`);
    await live.page.locator('.grid-cell.selectable').first().waitFor();
    await live.page.getByLabel('Assignee').selectOption({ label: 'Ann (annotator)' });
    await live.page.locator(`.grid-cell[data-image-id="${imageIds[0]}"]`).click();
    await live.page.locator(`.grid-cell[data-image-id="${imageIds[2]}"]`).click();
    assert.equal(await live.page.locator('.grid-cell.selected').count(), 2);
    await live.page.getByRole('button', { name: 'Assign 2 selected' }).click();
    await live.page.locator('tr[data-person="ann@example.com"]').waitFor();
    const assigned = await call<{ image_id: number; user_id: number }[]>('get', `/api/projects/${projectId}/assignments`);
    assert.deepEqual(assigned.map((a) => a.image_id).sort((a, b) => a - b), [imageIds[0], imageIds[2]]);
    assert.equal(await live.page.locator('tr[data-person="ann@example.com"] td').nth(1).innerText(), '2');
    // By count: one more of the unassigned, unlabelled images.
    await live.page.getByLabel('Image count').fill('1');
    await live.page.getByRole('button', { name: 'Assign 1 unlabelled' }).click();
    await until('three assigned', async () => (await live.page.locator('tr[data-person="ann@example.com"] td').nth(1).innerText()) === '3');
    assert.equal((await call<unknown[]>('get', `/api/projects/${projectId}/assignments`)).length, 3);
    await screenshot(live.page, 'label-03-assign');
  });

  it('the review page keeps the aspect ratio and draws masks pixel for pixel, polygons as stored, accepted predictions marked', async () => {
    const [imageId] = imageIds;
    const bitmap = new Uint8Array(400 * 200);
    for (let y = 20; y < 60; y++) for (let x = 300; x < 340; x++) if ((x + y) % 2 === 0 || y < 40) bitmap[y * 400 + x] = 1;
    const rle = encodeRle({ width: 400, height: 200, data: bitmap });
    await call('post', `/api/images/${imageId}/annotations`, { class_id: classIds[0], annotation_type: 'mask', geometry: { rle } });
    const polygon = [[20, 20], [120, 30], [60, 150]];
    await call('post', `/api/images/${imageId}/annotations`, { class_id: classIds[1], annotation_type: 'polygon', geometry: { points: polygon } });
    const predicted = await call<{ id: number }>('post', `/api/images/${imageId}/annotations`, { class_id: classIds[0], annotation_type: 'bbox', geometry: { x: 150, y: 100, width: 60, height: 40 }, confidence: 0.9, source: 'model:1', status: 'suggested' });
    await call('post', `/api/annotations/${predicted.id}/accept`, {}, 200);
    await call('post', `/api/projects/${projectId}/reviews`, { image_id: imageId });
    await live.page.goto(`${base()}/projects/${projectId}/review`);
    const frame = live.page.getByTestId('shapes-frame');
    await frame.waitFor();
    await live.page.locator('[data-shape="mask"]').waitFor();
    const box = (await frame.boundingBox())!;
    assert.ok(Math.abs(box.width / box.height - 2) < 0.02, `drawn at 2:1, got ${box.width}×${box.height}`);
    // The polygon is drawn with the stored points, filled.
    assert.equal(await live.page.locator('[data-shape="polygon"]').getAttribute('d'), `M${polygon.map((p) => p.join(' ')).join('L')}Z`);
    // The mask image holds exactly the stored pixels.
    const drawn = await live.page.evaluate(async () => {
      const el = document.querySelector('[data-shape="mask"]')!;
      const img = new Image();
      img.src = el.getAttribute('href')!;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const data = ctx.getImageData(0, 0, c.width, c.height).data;
      const on: number[] = [];
      for (let i = 0; i < c.width * c.height; i++) if (data[i * 4 + 3] > 0) on.push(i);
      return { width: c.width, height: c.height, on };
    });
    const expected: number[] = [];
    bitmap.forEach((v, i) => v && expected.push(i));
    assert.equal(drawn.width, 400);
    assert.equal(drawn.height, 200);
    assert.deepEqual(drawn.on, expected, 'every mask pixel and only those');
    const labels = await live.page.locator('[data-label]').evaluateAll((els) => els.map((e) => e.getAttribute('data-label')));
    assert.deepEqual(labels.sort(), ['cat', 'cat 90% · accepted prediction', 'dog']);
    assert.match(await live.page.getByTestId('accepted-predictions').innerText(), /1 accepted model prediction/);
    await screenshot(live.page, 'label-04-review-drawn');
  });

  it('grid filters live in the URL: opening an image and going Back returns to the same filter', async () => {
    await live.page.goto(`${base()}/projects/${projectId}`);
    await live.page.locator('.grid-cell').first().waitFor();
    await live.page.getByLabel('Class filter').selectOption({ label: 'dog' });
    await until('the filter in the URL', async () => new URL(live.page.url()).searchParams.get('class') === String(classIds[1]));
    await until('one image', async () => (await live.page.locator('.grid-cell').count()) === 1);
    const href = await live.page.locator('.grid-cell').first().getAttribute('href');
    assert.match(href ?? '', new RegExp(`image=${imageIds[0]}.*class=${classIds[1]}`), 'the editor link carries the filter');
    await live.page.locator('.grid-cell').first().click();
    await live.page.waitForURL(/\/annotate\?/);
    await live.page.goBack();
    await until('back on the filtered grid', async () => (await live.page.locator('.grid-cell').count()) === 1);
    assert.equal(await live.page.getByLabel('Class filter').inputValue(), String(classIds[1]));

    // Not annotated: three images. The editor counts and steps inside the filter, and its crumb returns to it.
    await live.page.getByRole('button', { name: 'Clear filters' }).click();
    await live.page.getByLabel('Annotated filter').selectOption('no');
    await until('three images', async () => (await live.page.locator('.grid-cell').count()) === 3);
    await live.page.locator('.grid-cell').nth(1).click();
    await until('position 2 / 3', async () => (await live.page.getByTestId('image-position').innerText()).startsWith('2 / 3'));
    await until('the second unannotated image', async () => (await live.page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageIds[2]);
    await live.page.keyboard.press('d');
    await until('position 3 / 3', async () => (await live.page.getByTestId('image-position').innerText()).startsWith('3 / 3'));
    await until('the third unannotated image', async () => (await live.page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageIds[3]);
    assert.equal(new URL(live.page.url()).searchParams.get('annotated'), 'no', 'the filter stays in the editor URL');
    await live.page.getByTestId('back-to-grid').click();
    await until('the filtered grid again', async () => (await live.page.locator('.grid-cell').count()) === 3);
    assert.equal(await live.page.getByLabel('Annotated filter').inputValue(), 'no');
    assert.deepEqual(live.errors, []);
  });

  it('the editor follows the project type, fills polygons, draws class labels on shapes and keeps class colours distinct', async () => {
    await signIn('olga@example.com');
    const seg = (await call<{ id: number }>('post', '/api/projects', { name: 'Seg', project_type: 'instance_segmentation' })).id;
    const grey = await sharp({ create: { width: 400, height: 200, channels: 3, background: { r: 128, g: 128, b: 128 } } }).png().toBuffer();
    const res = await live.page.request.post(`${base()}/api/projects/${seg}/images`, { multipart: { files: { name: 'grey.png', mimeType: 'image/png', buffer: grey } } });
    const imageId = (await res.json()).images[0].id as number;
    // Two classes given the same colour (as older projects had): the editor still draws them apart.
    const a = (await call<{ id: number }>('post', `/api/projects/${seg}/classes`, { name: 'black-bishop', color: '#f28e2b' })).id;
    const b = (await call<{ id: number }>('post', `/api/projects/${seg}/classes`, { name: 'white-queen', color: '#f28e2b' })).id;
    await call('post', `/api/images/${imageId}/annotations`, { class_id: a, annotation_type: 'polygon', geometry: { points: [[40, 60], [160, 60], [160, 180], [40, 180]] } });
    await call('post', `/api/images/${imageId}/annotations`, { class_id: b, annotation_type: 'polygon', geometry: { points: [[240, 60], [360, 60], [360, 180], [240, 180]] } });
    await live.page.goto(`${base()}/projects/${seg}/annotate?image=${imageId}`);
    await until('the editor', () => live.page.evaluate(() => window.__versaEditor?.imageId() ?? undefined));
    await until('polygon tool active', async () => (await live.page.locator('[data-tool="polygon"]').getAttribute('class')) === 'active');
    await until('shapes loaded', () => live.page.evaluate(() => (window.__versaEditor!.controller.store?.items.size ?? 0) === 2));
    await new Promise((r) => setTimeout(r, 300));
    const pixel = (x: number, y: number) =>
      live.page.evaluate(([ix, iy]) => {
        const c = window.__versaEditor!.controller;
        const dpr = window.devicePixelRatio || 1;
        const d = c.canvas.getContext('2d')!.getImageData(Math.round((c.tx + ix * c.scale) * dpr), Math.round((c.ty + iy * c.scale) * dpr), 1, 1).data;
        return [d[0], d[1], d[2]];
      }, [x, y]);
    const inA = await pixel(100, 150);
    const inB = await pixel(300, 150);
    const outside = await pixel(200, 190);
    assert.ok(Math.abs(outside[0] - 128) < 6 && Math.abs(outside[2] - 128) < 6, `outside the shapes the image shows: ${outside}`);
    assert.ok(Math.abs(inA[0] - 128) + Math.abs(inA[1] - 128) + Math.abs(inA[2] - 128) > 30, `polygon A is filled: ${inA}`);
    assert.ok(Math.abs(inA[0] - inB[0]) + Math.abs(inA[1] - inB[1]) + Math.abs(inA[2] - inB[2]) > 30, `two classes, two colours: ${inA} vs ${inB}`);
    // The label backing sits just above the polygon's top-left corner: darker than the grey image.
    const labelArea = await live.page.evaluate(() => {
      const c = window.__versaEditor!.controller;
      const dpr = window.devicePixelRatio || 1;
      const x0 = Math.round((c.tx + 40 * c.scale) * dpr), y1 = Math.round((c.ty + 60 * c.scale) * dpr);
      const d = c.canvas.getContext('2d')!.getImageData(x0, y1 - Math.round(12 * dpr), Math.round(60 * dpr), Math.round(12 * dpr)).data;
      let dark = 0, coloured = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] < 70 && d[i + 1] < 70 && d[i + 2] < 70) dark++;
        else if (Math.abs(d[i] - d[i + 2]) > 40) coloured++;
      }
      return { dark, coloured };
    });
    assert.ok(labelArea.dark > 50 && labelArea.coloured > 5, `a class label (dark backing, coloured text) is drawn on the shape: ${JSON.stringify(labelArea)}`);
    await screenshot(live.page, 'label-05-editor-seg');
    // The minimap never covers the image's corner: hidden at fit, and off the image's bottom-right corner when zoomed.
    assert.equal(await live.page.locator('canvas.minimap').isVisible(), false, 'no minimap while the whole image is in view');
    const canvasBox = (await live.page.locator('canvas').first().boundingBox())!;
    await live.page.mouse.move(canvasBox.x + canvasBox.width * 0.7, canvasBox.y + canvasBox.height * 0.7);
    for (let i = 0; i < 4; i++) await live.page.mouse.wheel(0, -300);
    await until('the minimap shown when zoomed in', () => live.page.locator('canvas.minimap').isVisible());
    const overlap = await live.page.evaluate(() => {
      const c = window.__versaEditor!.controller as unknown as { canvas: HTMLCanvasElement; tx: number; ty: number; scale: number; image: { width: number; height: number } };
      const r = c.canvas.getBoundingClientRect();
      const m = document.querySelector('canvas.minimap')!.getBoundingClientRect();
      const corners = [[0, 0], [c.image.width, 0], [0, c.image.height], [c.image.width, c.image.height]].map(([x, y]) => [r.left + c.tx + x * c.scale, r.top + c.ty + y * c.scale]);
      return corners.filter(([x, y]) => x >= m.left && x <= m.right && y >= m.top && y <= m.bottom).length;
    });
    assert.equal(overlap, 0, 'no corner of the image lies under the minimap');
    assert.deepEqual(live.errors, []);
  });

  it('predictions are reviewed keyboard-first in the editor, least confident first: selected on open, Tab in order, Y accepts, Ctrl+Z undoes, Shift+N rejects the rest', async () => {
    const imageId = imageIds[3];
    const make = (x: number, confidence: number) => call<{ id: number }>('post', `/api/images/${imageId}/annotations`, { class_id: classIds[0], annotation_type: 'bbox', geometry: { x, y: 50, width: 60, height: 60 }, confidence, source: 'model:1', status: 'suggested' });
    const ids = [(await make(20, 0.4)).id, (await make(150, 0.9)).id, (await make(280, 0.6)).id];
    const statusOf = async (id: number) => {
      const res = await live.page.request.get(`${base()}/api/annotations/${id}`);
      return res.status() === 404 ? 'gone' : ((await res.json()) as { status: string }).status;
    };
    await live.page.goto(`${base()}/projects/${projectId}/annotate?image=${imageId}`);
    await until('the editor', () => live.page.evaluate(() => (window.__versaEditor?.controller.store?.items.size ?? 0) === 3));
    const selected = () => live.page.evaluate(() => {
      const c = window.__versaEditor!.controller as unknown as { selectedKey: number | null; store: { items: Map<number, { id: number }> } };
      return c.selectedKey === null ? null : c.store.items.get(c.selectedKey)!.id;
    });
    assert.equal(await selected(), ids[0], 'the least confident suggestion is selected when the image opens');
    // Tab goes from the least confident to the most, then wraps around.
    const order = [];
    for (let i = 0; i < 3; i++) {
      await live.page.keyboard.press('Tab');
      order.push(await selected());
    }
    assert.deepEqual(order, [ids[2], ids[1], ids[0]]);
    await live.page.keyboard.press('y');
    await until('first accepted', async () => (await statusOf(ids[0])) === 'accepted');
    await live.page.keyboard.press('Control+z');
    await until('accept undone', async () => (await statusOf(ids[0])) === 'suggested');
    await live.page.keyboard.press('Control+Shift+z');
    await until('accept redone', async () => (await statusOf(ids[0])) === 'accepted');
    await live.page.keyboard.press('Shift+N');
    await until('the rest rejected', async () => (await statusOf(ids[1])) === 'gone' && (await statusOf(ids[2])) === 'gone');
    assert.equal(await statusOf(ids[0]), 'accepted', 'the accepted one stays');
    await live.page.getByText('2 suggestions rejected').waitFor();
    assert.deepEqual(live.errors, []);
  });

  it('the objects sidebar lists every shape (virtualised), selects in sync with the canvas, hides, locks and changes class undoably', async () => {
    const imageId = imageIds[1];
    const made: number[] = [];
    for (let i = 0; i < 200; i++) {
      made.push((await call<{ id: number }>('post', `/api/images/${imageId}/annotations`, { class_id: classIds[i % 2], annotation_type: 'bbox', geometry: { x: (i % 20) * 19 + 1, y: Math.floor(i / 20) * 19 + 1, width: 15, height: 15 } })).id);
    }
    await live.page.goto(`${base()}/projects/${projectId}/annotate?image=${imageId}`);
    await until('shapes loaded', () => live.page.evaluate(() => (window.__versaEditor?.controller.store?.items.size ?? 0) === 200));
    const panel = live.page.getByTestId('objects-panel');
    await until('the count', async () => (await panel.locator('.objects-head').innerText()).includes('200'));
    const domRows = await panel.locator('.object-row').count();
    assert.ok(domRows > 5 && domRows < 60, `only a screenful of rows exists in the DOM: ${domRows}`);
    // Filter by class.
    await live.page.getByLabel('Objects class filter').selectOption({ label: 'dog' });
    await until('filtered', async () => (await panel.locator('.objects-head').innerText()).includes('100 of 200'));
    await live.page.getByLabel('Objects class filter').selectOption('');
    // Selecting a row selects the shape on the canvas; arrow keys move the selection.
    await panel.locator('.object-row').first().click();
    const selectedId = () => live.page.evaluate(() => {
      const c = window.__versaEditor!.controller as unknown as { selectedKey: number | null; store: { items: Map<number, { id: number }> } };
      return c.selectedKey === null ? null : c.store.items.get(c.selectedKey)!.id;
    });
    assert.equal(await selectedId(), made[0]);
    await live.page.keyboard.press('ArrowDown');
    assert.equal(await selectedId(), made[1]);
    assert.equal(await panel.locator('.object-row.selected').getAttribute('data-object-key') !== null, true);
    // Class change from the list: saved, announced, undone by Ctrl+Z.
    const row = panel.locator('.object-row.selected');
    await row.locator('select').selectOption({ label: 'cat' });
    const classOf = async (id: number) => ((await call<{ class_id: number }>('get', `/api/annotations/${id}`)) as { class_id: number }).class_id;
    await until('class changed', async () => (await classOf(made[1])) === classIds[0]);
    await live.page.getByText('Class changed: dog → cat').waitFor();
    await live.page.locator('canvas').first().focus().catch(() => undefined);
    await live.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await live.page.keyboard.press('Control+z');
    await until('class change undone', async () => (await classOf(made[1])) === classIds[1]);
    // Lock the first shape: a click on it on the canvas no longer selects it. Hide it: it is no longer drawn.
    await panel.locator('.object-row').first().getByRole('button', { name: 'Lock' }).click();
    const centre = await live.page.evaluate(() => {
      const c = window.__versaEditor!.controller;
      const r = c.canvas.getBoundingClientRect();
      return { x: r.left + c.tx + 8.5 * c.scale, y: r.top + c.ty + 8.5 * c.scale };
    });
    await live.page.keyboard.press('v');
    await live.page.mouse.click(centre.x, centre.y);
    assert.notEqual(await selectedId(), made[0], 'a locked shape is not picked on the canvas');
    const before = await live.page.evaluate(([x, y]) => {
      const c = window.__versaEditor!.controller;
      const dpr = window.devicePixelRatio || 1;
      const r = c.canvas.getBoundingClientRect();
      return Array.from(c.canvas.getContext('2d')!.getImageData(Math.round((x - r.left) * dpr), Math.round((y - r.top) * dpr - (7 * c.scale) * dpr), 1, 1).data);
    }, [centre.x, centre.y]);
    await panel.locator('.object-row').first().getByRole('button', { name: 'Hide' }).click();
    await new Promise((r) => setTimeout(r, 200));
    const after = await live.page.evaluate(([x, y]) => {
      const c = window.__versaEditor!.controller;
      const dpr = window.devicePixelRatio || 1;
      const r = c.canvas.getBoundingClientRect();
      return Array.from(c.canvas.getContext('2d')!.getImageData(Math.round((x - r.left) * dpr), Math.round((y - r.top) * dpr - (7 * c.scale) * dpr), 1, 1).data);
    }, [centre.x, centre.y]);
    assert.notDeepEqual(after, before, 'hiding the shape changes what is drawn at its edge');
    await screenshot(live.page, 'label-06-objects-panel');
    assert.deepEqual(live.errors, []);
  });
});
