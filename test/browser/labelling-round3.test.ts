/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { apiCaller, livePageSuite, screenshot, signInNewUser, SKIP_REASON, until } from './browser-harness.js';

/**
 * The labelling experience, round 3 (issue 30), driven in Chromium on the real pages: the suggestion keyboard loop,
 * the objects list at common screen widths, more than nine classes, suggestions drawn apart and counted only once
 * accepted, and controls that follow the role.
 */
describe('labelling round 3 (issue 30)', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  interface Stored {
    id: number;
    class_id: number;
    status: string;
    source: string;
  }
  let signing: Promise<void> | null = null;
  const signedIn = () => (signing ??= signInNewUser(call, 'ada@example.com'));

  /** A 128 × 128 image of coloured squares (the test model finds one box per colour: red cat, green dog, blue bird). */
  async function upload(projectId: number, squares: { x: number; y: number; colour: [number, number, number] }[], name = 'squares.png') {
    const png = await squaresPng(128, 128, squares.map((s) => ({ ...s, width: 30, height: 30 })));
    const res = await live.page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name, mimeType: 'image/png', buffer: png } } });
    assert.equal(res.status(), 201, await res.text());
    const imageId = (await res.json()).images[0].id as number;
    const stored = async () => (await (await live.page.request.get(`${base()}/api/images/${imageId}/annotations`)).json()) as Stored[];
    return { imageId, stored };
  }
  async function uploadModel(projectId: number): Promise<number> {
    const model = await live.page.request.post(`${base()}/api/projects/${projectId}/models/upload`, {
      multipart: { file: { name: 'pets.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from(buildYoloModel('v8', { width: 128, height: 128 }, ['cat', 'dog', 'bird'])) }, name: 'pets' },
    });
    assert.equal(model.status(), 201, await model.text());
    return (await model.json()).id as number;
  }
  async function openEditor(projectId: number, imageId: number): Promise<void> {
    await live.page.goto(`${base()}/projects/${projectId}/annotate?image=${imageId}`);
    await until('the editor', async () => (await live.page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageId);
  }
  const selected = () =>
    live.page.evaluate(() => {
      const c = window.__versaEditor!.controller as unknown as { selectedKey: number | null; store: { items: Map<number, { status: string; id: number }> } };
      const ann = c.selectedKey !== null ? c.store.items.get(c.selectedKey) : undefined;
      return ann ? { key: c.selectedKey, status: ann.status } : null;
    });
  async function screenOf(x: number, y: number): Promise<{ x: number; y: number }> {
    return live.page.evaluate(
      ([ix, iy]) => {
        const c = window.__versaEditor!.controller;
        const r = c.canvas.getBoundingClientRect();
        return { x: r.left + c.tx + ix * c.scale, y: r.top + c.ty + iy * c.scale };
      },
      [x, y],
    );
  }

  it('item 1: after "Run detector" the keys work at once; a class key, Reject and Delete each settle one suggestion and move on; the ? sheet lists them', async () => {
    const page = live.page;
    await signedIn();
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Loop' })).id;
    await call('post', `/api/projects/${projectId}/classes`, { name: 'cat' });
    const dog = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'dog' })).id;
    await call('post', `/api/projects/${projectId}/classes`, { name: 'bird' });
    const { imageId, stored } = await upload(projectId, [
      { x: 10, y: 10, colour: [255, 0, 0] },
      { x: 70, y: 70, colour: [0, 255, 0] },
      { x: 75, y: 10, colour: [0, 0, 255] },
    ]);
    const modelId = await uploadModel(projectId);
    await openEditor(projectId, imageId);

    await page.getByRole('button', { name: 'Run detector on this image' }).click();
    await until('three suggestions', async () => (await page.getByTestId('detector-result').innerText().catch(() => '')).startsWith('3 found'));
    // The keyboard is on the canvas, with the first suggestion selected: no click on the canvas first.
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'editor-canvas');
    const first = (await until('a suggestion selected', async () => (await selected())?.status === 'suggested' && (await selected())))!;
    // A visible accept / reject control for the selected suggestion.
    await page.getByTestId('suggestion-bar').getByRole('button', { name: 'Accept (Y)' }).waitFor();

    // One action per suggestion: a class key accepts it as that class and selects the next one ...
    await page.keyboard.press('2');
    const second = (await until('the next suggestion selected', async () => {
      const s = await selected();
      return s && s.key !== first.key && s.status === 'suggested' && s;
    }))!;
    // ... the Reject button rejects a false positive and selects the next ...
    await page.getByTestId('suggestion-bar').getByRole('button', { name: 'Reject (N)' }).click();
    await until('the third suggestion selected', async () => {
      const s = await selected();
      return s && s.key !== first.key && s.key !== second.key && s.status === 'suggested';
    });
    // ... and Delete rejects the last one in one key.
    await page.keyboard.press('Delete');
    await until('one accepted dog left, still the model\'s', async () => {
      const now = await stored();
      return now.length === 1 && now[0].status === 'accepted' && now[0].class_id === dog && now[0].source === `model:${modelId}`;
    });

    // The shortcut sheet names the suggestion keys and H / L.
    await page.keyboard.press('?');
    const sheet = await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).innerText();
    for (const key of ['Tab', 'Y / N', 'Shift+Y', 'H / L']) assert.ok(sheet.includes(key), `the ? sheet lists ${key}`);
    await page.keyboard.press('Escape');
    assert.deepEqual(live.errors, []);
  });


  it('an information message over the image lets a box be drawn through it, and goes by itself', async () => {
    const page = live.page;
    await signedIn();
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Toast' })).id;
    for (const name of ['cat', 'dog', 'bird']) await call('post', `/api/projects/${projectId}/classes`, { name });
    const { imageId } = await upload(projectId, [{ x: 10, y: 70, colour: [255, 0, 0] }]);
    await uploadModel(projectId);
    await openEditor(projectId, imageId);
    await page.getByRole('button', { name: 'Run detector on this image' }).click();
    await until('the suggestion selected', async () => (await selected())?.status === 'suggested');
    await page.keyboard.press('1');
    const toast = page.locator('.toast');
    await until('"Accepted as cat" shown', async () => (await toast.innerText().catch(() => '')).startsWith('Accepted as cat'));
    await page.keyboard.press('b');
    // A drag that starts and ends on the message (it lies over the top of the image) draws a box.
    const r = (await toast.boundingBox())!;
    const count = () => page.evaluate(() => (window.__versaEditor!.controller as unknown as { store: { items: Map<number, unknown> } }).store.items.size);
    const before = await count();
    await page.mouse.move(r.x + 20, r.y + 5);
    await page.mouse.down();
    await page.mouse.move(r.x + 120, r.y + r.height - 5, { steps: 4 });
    await page.mouse.up();
    await until('the box drawn under the message', async () => (await count()) === before + 1);
    await until('the message gone by itself', async () => (await toast.count()) === 0, 8000);
    assert.deepEqual(live.errors, []);
  });

  it('"Run detector" and the auto-annotate form keep the per-class thresholds stored at promotion unless a confidence is set', async () => {
    const page = live.page;
    await signedIn();
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Thresholds' })).id;
    for (const name of ['cat', 'dog', 'bird']) await call('post', `/api/projects/${projectId}/classes`, { name });
    // The test detector scores a square by its colour's level: a red of 200 is a cat at 0.78, a full green a sure dog.
    const { imageId, stored } = await upload(projectId, [{ x: 10, y: 10, colour: [200, 0, 0] }, { x: 70, y: 70, colour: [0, 255, 0] }]);
    const modelId = await uploadModel(projectId);
    await live.server.versa.deps.db.updateTable('models').set({ class_thresholds: JSON.stringify({ cat: 0.9 }) }).where('id', '=', modelId).execute();
    await openEditor(projectId, imageId);

    const detector = page.locator('[aria-label="Detector"]');
    assert.match(await detector.innerText(), /Confidence per class/);
    await page.getByRole('button', { name: 'Run detector on this image' }).click();
    await until('the dog found, the unsure cat left out (below its 0.9)', async () => (await page.getByTestId('detector-result').innerText().catch(() => '')).startsWith('1 found'));
    assert.equal((await stored()).length, 1);

    // The project page's auto-annotate form: empty confidence means the same per-class cut-off.
    await page.goto(`${base()}/projects/${projectId}?tab=models`);
    const form = page.locator('[aria-label="Auto-annotate"]');
    const confidence = form.getByLabel('Confidence');
    await confidence.waitFor();
    assert.equal(await confidence.inputValue(), '');
    assert.equal(await confidence.getAttribute('placeholder'), 'per class');
    assert.deepEqual(live.errors, []);
  });
  it('item 1: repeated clicks on stacked shapes cycle through every shape under the cursor', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Stacked' })).id;
    const cls = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'piece' })).id;
    const { imageId } = await upload(projectId, []);
    const ids: number[] = [];
    for (const g of [
      { x: 2, y: 2, width: 120, height: 120 },
      { x: 10, y: 10, width: 60, height: 60 },
      { x: 20, y: 20, width: 20, height: 20 },
    ])
      ids.push((await call<{ id: number }>('post', `/api/images/${imageId}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: g })).id);
    await openEditor(projectId, imageId);
    const selectedId = () =>
      page.evaluate(() => {
        const c = window.__versaEditor!.controller as unknown as { selectedKey: number | null; store: { items: Map<number, { id: number }> } };
        return c.selectedKey !== null ? (c.store.items.get(c.selectedKey)?.id ?? null) : null;
      });
    for (const tool of ['V', 'B']) {
      await page.keyboard.press('Escape');
      await page.keyboard.press(tool);
      const p = await screenOf(30, 30);
      const seen: (number | null)[] = [];
      for (let i = 0; i < 4; i++) {
        await page.mouse.click(p.x, p.y);
        seen.push(await selectedId());
      }
      assert.deepEqual(seen, [ids[2], ids[1], ids[0], ids[2]], `${tool}: smallest first, then the larger ones, round again`);
    }
    assert.deepEqual(live.errors, []);
  });

  it('item 2: at 1280, 1440 and 1920 px wide the objects list\'s hide, lock and delete are inside the viewport and clickable, beside the detector panel; the source text is whole; H and L work from the canvas', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Fits' })).id;
    for (const name of ['cat', 'dog', 'bird']) await call('post', `/api/projects/${projectId}/classes`, { name });
    const { imageId } = await upload(projectId, [{ x: 10, y: 10, colour: [255, 0, 0] }, { x: 70, y: 70, colour: [0, 255, 0] }]);
    const modelId = await uploadModel(projectId);
    await call('post', `/api/projects/${projectId}/auto-annotate/yolo`, { model: modelId, confidence: 0.25, iou: 0.45, image_ids: [imageId] }, 200);
    const box = await call<{ id: number }>('post', `/api/images/${imageId}/annotations`, { class_id: (await call<{ id: number }[]>('get', `/api/projects/${projectId}/classes`))[0].id, annotation_type: 'bbox', geometry: { x: 40, y: 40, width: 30, height: 30 } });
    for (const [width, height] of [[1280, 800], [1440, 900], [1920, 1080]]) {
      await page.setViewportSize({ width, height });
      await openEditor(projectId, imageId);
      await page.getByRole('button', { name: 'Run detector on this image' }).waitFor();
      const rows = page.locator('.object-row');
      await until('the objects listed', async () => (await rows.count()) >= 3);
      for (let i = 0; i < (await rows.count()); i++) {
        for (const name of ['Hide', 'Lock', 'Delete object']) {
          const button = rows.nth(i).getByRole('button', { name, exact: true });
          const b = (await button.boundingBox())!;
          assert.ok(b && b.x >= 0 && b.y >= 0 && b.x + b.width <= width && b.y + b.height <= height, `${width}px: ${name} of row ${i} inside the viewport (${JSON.stringify(b)})`);
          const onTop = await button.evaluate((el) => {
            const r = el.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return hit !== null && (hit === el || el.contains(hit));
          });
          assert.ok(onTop, `${width}px: ${name} of row ${i} is what a click there hits`);
        }
        // The source text is shown whole (or its whole text in a tooltip).
        const info = rows.nth(i).locator('.object-info');
        const whole = await info.evaluate((el) => el.scrollWidth <= el.clientWidth + 1 || (el.getAttribute('title') ?? '') === el.textContent);
        assert.ok(whole, `${width}px: the text of row ${i} is not cut off`);
      }
      await screenshot(page, `objects-list-${width}`);
      // A real click on the first row's Hide hides that shape (clicked where it is, no scrolling).
      const hide = rows.first().getByRole('button', { name: 'Hide', exact: true });
      const b = (await hide.boundingBox())!;
      await page.mouse.click(b.x + b.width / 2, b.y + b.height / 2);
      assert.equal(await page.evaluate(() => window.__versaEditor!.controller.hidden.size), 1, `${width}px: Hide clicked`);
    }
    // H and L act on the shape selected on the canvas, with the canvas focused.
    const p = await screenOf(55, 55);
    await page.keyboard.press('V');
    await page.mouse.click(p.x, p.y);
    const key = await page.evaluate((id) => [...window.__versaEditor!.controller.store!.items].find(([, a]) => (a as { id: number }).id === id)![0], box.id);
    assert.equal(await page.evaluate(() => (window.__versaEditor!.controller as unknown as { selectedKey: number | null }).selectedKey), key);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'editor-canvas');
    await page.keyboard.press('l');
    assert.equal(await page.evaluate((k) => window.__versaEditor!.controller.locked.has(k), key), true, 'L locked it');
    await page.keyboard.press('h');
    assert.equal(await page.evaluate((k) => window.__versaEditor!.controller.hidden.has(k), key), true, 'H hid it');
    await page.setViewportSize({ width: 1280, height: 800 });
    assert.deepEqual(live.errors, []);
  });

  it('item 3: with thirteen classes, Q and a few letters pick any class for the selected shape; a new name adds the class from the editor', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Chess' })).id;
    const names = ['white-king', 'white-queen', 'white-rook', 'white-bishop', 'white-knight', 'white-pawn', 'black-king', 'black-queen', 'black-rook', 'black-bishop', 'black-knight', 'black-pawn', 'board'];
    const ids = new Map<string, number>();
    for (const name of names) ids.set(name, (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name })).id);
    const { imageId, stored } = await upload(projectId, []);
    await call('post', `/api/images/${imageId}/annotations`, { class_id: ids.get('white-king'), annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 40, height: 40 } });
    await openEditor(projectId, imageId);
    await page.keyboard.press('V');
    const p = await screenOf(40, 40);
    await page.mouse.click(p.x, p.y);
    await until('the shape selected', async () => (await selected()) !== null);
    // The eleventh class, beyond the number keys: Q, three letters, Enter.
    await page.keyboard.press('q');
    await page.getByRole('textbox', { name: 'Find a class' }).waitFor();
    await page.keyboard.type('knight');
    const found = page.getByRole('listbox', { name: 'Classes found' }).getByRole('option');
    assert.deepEqual((await found.allInnerTexts()).map((t) => t.trim()), ['white-knight', 'black-knight', '+ Add class “knight”'], `knight finds the two knights: ${await found.allInnerTexts()}`);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await screenshot(page, 'class-search');
    await until('the shape moved to black-knight', async () => (await stored())[0]?.class_id === ids.get('black-knight'));
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'editor-canvas', 'the keys are back on the canvas');
    // A name no class has: Enter adds it (the owner may change classes) and makes it the class of the selected shape.
    await page.keyboard.press('q');
    await page.getByRole('textbox', { name: 'Find a class' }).waitFor();
    await page.keyboard.type('clock');
    await page.getByRole('option', { name: '+ Add class “clock”' }).waitFor();
    await page.keyboard.press('Enter');
    const clock = await until('the class added', async () => (await call<{ id: number; name: string }[]>('get', `/api/projects/${projectId}/classes`)).find((c) => c.name === 'clock'));
    await until('the shape moved to clock', async () => (await stored())[0]?.class_id === clock.id);
    await page.locator('.class-list li', { hasText: 'clock' }).waitFor();
    assert.deepEqual(live.errors, []);
  });

  it('item 4: suggestions are drawn apart and not counted until accepted; one relabelled in the objects list is accepted and stays the model\'s', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Counted' })).id;
    for (const name of ['cat', 'dog']) await call('post', `/api/projects/${projectId}/classes`, { name });
    const bird = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'bird' })).id;
    const { imageId, stored } = await upload(projectId, [{ x: 10, y: 10, colour: [255, 0, 0] }, { x: 70, y: 70, colour: [0, 255, 0] }]);
    const modelId = await uploadModel(projectId);
    await call('post', `/api/projects/${projectId}/auto-annotate/yolo`, { model: modelId, confidence: 0.25, iou: 0.45, image_ids: [imageId] }, 200);
    assert.deepEqual((await stored()).map((a) => a.status), ['suggested', 'suggested']);
    const totals = async () => {
      const project = await call<{ annotation_count: number }>('get', `/api/projects/${projectId}`);
      const classes = await call<{ name: string; annotation_count: number }[]>('get', `/api/projects/${projectId}/classes`);
      return [project.annotation_count, ...classes.map((c) => c.annotation_count)];
    };
    assert.deepEqual(await totals(), [0, 0, 0, 0], 'two suggestions count nowhere yet');

    await openEditor(projectId, imageId);
    await until('both drawn as suggestions', async () => (await page.evaluate(() => window.__versaEditor!.controller.drawn.suggested)) === 2);
    assert.equal(await page.evaluate(() => window.__versaEditor!.controller.drawn.solid), 0, 'nothing stroked as an accepted shape');
    assert.match(await page.getByTestId('annotation-count').innerText(), /^0 annotations · 2 suggestions/);

    // The first suggestion moved to bird in the objects list: accepted as bird, still the model's.
    await page.getByRole('combobox', { name: 'Class of object 1' }).selectOption(String(bird));
    await until('accepted as bird, source kept', async () => {
      const first = (await stored())[0];
      return first.status === 'accepted' && first.class_id === bird && first.source === `model:${modelId}`;
    });
    await until('drawn as an accepted shape now', async () => (await page.evaluate(() => window.__versaEditor!.controller.drawn)).suggested === 1);
    assert.deepEqual(await totals(), [1, 0, 0, 1], 'the accepted one counts, for its new class');
    assert.match(await page.getByTestId('annotation-count').innerText(), /^1 annotation · 1 suggestion/);
    assert.deepEqual(live.errors, []);
  });

  it('item 10: the upload page names its project; the editor shows a done edit as information, a refusal as an error', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Harbour photos' })).id;
    const cat = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'cat' })).id;
    await call('post', `/api/projects/${projectId}/classes`, { name: 'dog' });
    await page.goto(`${base()}/projects/${projectId}/upload`);
    await page.getByRole('link', { name: 'Harbour photos' }).first().waitFor();
    assert.match(await page.locator('.crumb').first().innerText(), /^Upload to Harbour photos/);

    const { imageId } = await upload(projectId, []);
    await call('post', `/api/images/${imageId}/annotations`, { class_id: cat, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 40, height: 40 } });
    await openEditor(projectId, imageId);
    await page.keyboard.press('V');
    const p = await screenOf(40, 40);
    await page.mouse.click(p.x, p.y);
    await until('the shape selected', async () => (await selected()) !== null);
    await page.keyboard.press('2');
    const done = page.locator('.toast .banner');
    await done.getByText('Class changed: cat → dog').waitFor();
    assert.equal(await done.getAttribute('role'), 'status', 'a done edit is information');
    assert.match((await done.getAttribute('class')) ?? '', /\binfo\b/);
    // Locked, then a class key: refused (the class stays), said as an error.
    await page.keyboard.press('l');
    await page.getByRole('button', { name: 'Unlock', exact: true }).waitFor();
    await page.keyboard.press('1');
    await done.getByText(/locked/).waitFor();
    assert.equal(await done.getAttribute('role'), 'alert', 'a refusal is an error');
    assert.deepEqual(live.errors, []);
  });

  it('item 8: every open invitation is listed; a new link replaces the old one (shown once), copied with a button, and revocable', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Invites' })).id;
    const first = await call<{ url: string }>('post', `/api/projects/${projectId}/invitations`, { email: 'ida@example.com', role: 'annotator' });
    await call('post', `/api/projects/${projectId}/invitations`, { email: 'ivo@example.com', role: 'viewer' });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base() });
    await page.goto(`${base()}/projects/${projectId}?tab=members`);
    const table = page.getByRole('table', { name: 'Invitations' });
    await table.locator('tr[data-invitation="ivo@example.com"]').waitFor();
    assert.equal(await table.locator('tr[data-invitation]').count(), 2, 'both open invitations listed');
    await table.locator('tr[data-invitation="ida@example.com"]').getByRole('button', { name: 'New link' }).click();
    const field = page.getByLabel('Invitation link');
    await field.waitFor();
    const url = await field.inputValue();
    assert.match(url, new RegExp(`^${base()}/invite/[A-Za-z0-9_-]+$`));
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url, 'the link is on the clipboard');
    // The new link works, the old one no longer does.
    assert.equal((await page.request.get(`${base()}/api/invitations/${url.split('/').pop()}`)).status(), 200);
    assert.equal((await page.request.get(`${base()}/api/invitations/${first.url.split('/').pop()}`)).status(), 404);
    // Revoked: gone from the open ones.
    await table.locator('tr[data-invitation="ivo@example.com"]').getByRole('button', { name: 'Revoke' }).click();
    await until('revoked', async () => (await table.locator('tr[data-invitation="ivo@example.com"]').count()) === 0);
    assert.equal((await page.request.get(`${base()}/api/projects/${projectId}/invitations`)).ok(), true);
    assert.deepEqual(live.errors, []);
  });

  it('item 10: the export form starts on the latest ready version, not the current project', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Exported' })).id;
    const cls = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'cat' })).id;
    const { imageId } = await upload(projectId, []);
    await call('post', `/api/images/${imageId}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 40, height: 40 } });
    for (const name of ['first', 'second']) await call('post', `/api/projects/${projectId}/versions`, { name });
    const versions = await until('both versions ready', async () => {
      const list = await call<{ id: number; number: number; status: string }[]>('get', `/api/projects/${projectId}/versions`);
      return list.length === 2 && list.every((v) => v.status === 'ready') && list;
    }, 30_000);
    const latest = versions.sort((a, b) => b.number - a.number)[0];
    await page.goto(`${base()}/projects/${projectId}?tab=export`);
    const from = page.getByLabel('Version to export');
    await until('the latest version chosen', async () => (await from.inputValue()) === String(latest.id));
    assert.equal(await from.locator('option:checked').innerText(), `v${latest.number} second`);
    assert.deepEqual(live.errors, []);
  });

  it('item 6: a viewer and an annotator see only the controls their role can use, in the editor and on the project page', async () => {
    const page = live.page;
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Roles' })).id;
    const cls = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'cat' })).id;
    const { imageId } = await upload(projectId, []);
    await call('post', `/api/images/${imageId}/annotations`, { class_id: cls, annotation_type: 'bbox', geometry: { x: 20, y: 20, width: 40, height: 40 } });
    for (const [email, role] of [['vera@example.com', 'viewer'], ['ann@example.com', 'annotator']]) {
      await call('post', '/api/auth/register', { email, password: 'correct horse battery' });
      await call('post', `/api/projects/${projectId}/members`, { email, role });
    }
    const header = async (name: string) => page.getByRole('link', { name, exact: true }).count();

    // The viewer: no Review or Assign; in the editor, Select only, no class pickers, Delete, Undo or Submit.
    await call('post', '/api/auth/login', { email: 'vera@example.com', password: 'correct horse battery' }, 200);
    await page.goto(`${base()}/projects/${projectId}`);
    await page.getByRole('link', { name: 'Samples', exact: true }).waitFor();
    await until('the role known', async () => (await page.getByRole('button', { name: /^Annotate/ }).count()) === 1);
    assert.deepEqual([await header('Review'), await header('Assign')], [0, 0], 'a viewer is offered neither Review nor Assign');
    await openEditor(projectId, imageId);
    const tools = page.getByRole('navigation', { name: 'Tools' });
    await until('the drawing tools gone', async () => (await tools.locator('[data-tool]').count()) === 1);
    assert.equal(await tools.locator('[data-tool="select"]').count(), 1);
    await page.keyboard.press('V');
    const p = await screenOf(40, 40);
    await page.mouse.click(p.x, p.y);
    await until('the shape selected', async () => (await page.getByTestId('selected-class').count()) === 0 && (await page.getByText('Nothing selected').count()) === 0);
    for (const [what, locator] of [
      ['class of the selected shape', page.getByLabel('Class of the selected shape')],
      ['class of the object', page.getByLabel('Class of object 1')],
      ['Delete', page.getByRole('button', { name: 'Delete', exact: true })],
      ['Delete object', page.getByRole('button', { name: 'Delete object' })],
      ['Undo', page.getByRole('button', { name: 'Undo' })],
      ['Submit for review', page.getByRole('button', { name: 'Submit for review' })],
      ['Find class', page.getByRole('button', { name: /^Find/ })],
    ] as const)
      assert.equal(await locator.count(), 0, `a viewer sees no ${what}`);
    await page.keyboard.press('q');
    assert.equal(await page.getByRole('textbox', { name: 'Find a class' }).count(), 0, 'Q opens no class picker for a viewer');

    // The annotator: draws and picks classes, but adds none, and neither reviews nor assigns.
    await call('post', '/api/auth/login', { email: 'ann@example.com', password: 'correct horse battery' }, 200);
    await page.goto(`${base()}/projects/${projectId}`);
    await page.getByRole('link', { name: 'Annotate', exact: true }).waitFor();
    assert.deepEqual([await header('Review'), await header('Assign')], [0, 0], 'an annotator is offered neither Review nor Assign');
    await openEditor(projectId, imageId);
    await until('the drawing tools', async () => (await tools.locator('[data-tool="box"]').count()) === 1);
    await page.getByRole('button', { name: 'Find (Q)' }).click();
    await page.getByRole('textbox', { name: 'Find a class' }).fill('zebra');
    await page.getByText('No class matches').waitFor();
    assert.equal(await page.getByRole('option', { name: /Add class/ }).count(), 0, 'an annotator cannot add a class');
    assert.deepEqual(live.errors, []);
  });
});
