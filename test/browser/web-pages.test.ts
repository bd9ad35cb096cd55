/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { buildSamDecoder, buildSamEncoder } from '../helpers/onnx/sam-models.js';
import { squaresPng, type Square } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { closeLivePage, openLivePage, SKIP_REASON, screenshot, until, type Browser, type LiveServer } from './browser-harness.js';

interface Ann {
  id: number;
  class_id: number;
  annotation_type: string;
  geometry: { x?: number; y?: number; width?: number; height?: number; points?: number[][] };
}

/** Three small, different images (so none is a duplicate of another). */
async function writeImages(dir: string): Promise<string[]> {
  const colors = [
    { r: 200, g: 40, b: 40 },
    { r: 40, g: 160, b: 60 },
    { r: 40, g: 60, b: 200 },
  ];
  return Promise.all(
    colors.map(async (background, i) => {
      const path = join(dir, `scene-${i + 1}.png`);
      await sharp({ create: { width: 320, height: 240, channels: 3, background } })
        .composite([{ input: { create: { width: 80, height: 60, channels: 3, background: { r: 250, g: 250, b: 250 } } }, left: 40 + i * 30, top: 50 }])
        .png()
        .toFile(path);
      return path;
    }),
  );
}

/** Screen position of an image pixel, from the editor's view transform. */
async function screenOf(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  return page.evaluate(
    ([ix, iy]) => {
      const c = window.__versaEditor!.controller;
      const r = c.canvas.getBoundingClientRect();
      return { x: r.left + c.tx + ix * c.scale, y: r.top + c.ty + iy * c.scale };
    },
    [x, y],
  );
}

describe('web pages in Chromium', { skip: SKIP_REASON ?? false }, () => {
  let server: LiveServer;
  let browser: Browser;
  let page: Page;
  let imageDir: string;
  const errors: string[] = [];

  before(async () => {
    ({ server, browser, page } = await openLivePage(errors));
    imageDir = await mkdtemp(join(tmpdir(), 'versa-images-'));
  });
  after(async () => {
    await closeLivePage({ browser, server });
    await rm(imageDir, { recursive: true, force: true });
  });

  const apiGet = async <T>(url: string): Promise<T> => {
    const res = await page.request.get(server.baseUrl + url);
    assert.equal(res.status(), 200, `${url}: ${await res.text()}`);
    return (await res.json()) as T;
  };

  it('registers, creates a project, uploads, labels with box and polygon, changes class, undoes, moves on, exports', async () => {
    const base = server.baseUrl;

    // Not logged in: the dashboard sends us to the login page.
    await page.goto(`${base}/`);
    await page.waitForURL(/\/login/);
    await screenshot(page, '01-login');
    await page.getByRole('button', { name: 'No account? Register' }).click();
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=display_name]', 'Ada');
    await page.fill('input[name=password]', 'correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${base}/`);
    await page.getByText('No projects yet').waitFor();
    const me = await apiGet<{ email: string }>('/api/auth/me');
    assert.equal(me.email, 'ada@example.com');

    // Create a project.
    await page.getByRole('link', { name: 'New project' }).click();
    await page.fill('form[aria-label="Create project"] input[name=name]', 'Street scenes');
    await page.fill('form[aria-label="Create project"] textarea[name=description]', 'Browser test');
    await screenshot(page, '02-new-project');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/projects\/\d+\/upload$/);
    const projectId = Number(/\/projects\/(\d+)\//.exec(page.url())![1]);
    const project = await apiGet<{ name: string; project_type: string }>(`/api/projects/${projectId}`);
    assert.equal(project.name, 'Street scenes');
    assert.equal(project.project_type, 'object_detection');

    // Upload three images, and the first one again: it is reported as a duplicate.
    const files = await writeImages(imageDir);
    await page.setInputFiles('[data-testid=file-input]', files);
    await until('three uploads', async () => (await page.locator('tr[data-state=created]').count()) === 3);
    await page.setInputFiles('[data-testid=file-input]', files[0]);
    await until('the duplicate', async () => (await page.locator('tr[data-state=duplicate]').count()) === 1);
    await screenshot(page, '03-upload');
    const images = await apiGet<{ id: number; original_name: string }[]>(`/api/projects/${projectId}/images`);
    assert.deepEqual(images.map((i) => i.original_name).sort(), ['scene-1.png', 'scene-2.png', 'scene-3.png']);

    // Project page: add two classes, see the thumbnails.
    await page.getByRole('link', { name: 'Project' }).click();
    await page.waitForURL(`${base}/projects/${projectId}`);
    for (const name of ['car', 'person']) {
      await page.fill('input[placeholder="New class"]', name);
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.locator('.class-list .class-name', { hasText: name }).waitFor();
    }
    const classes = await apiGet<{ id: number; name: string; color: string }[]>(`/api/projects/${projectId}/classes`);
    const car = classes.find((c) => c.name === 'car')!;
    const person = classes.find((c) => c.name === 'person')!;
    assert.ok(car && person);
    assert.notEqual(car.color, person.color, 'the server assigns palette colours');
    await until('thumbnails', async () => page.evaluate(() => Array.from(document.querySelectorAll<HTMLImageElement>(".grid-cell img")).filter((i) => i.complete && i.naturalWidth > 0).length === 3));
    await screenshot(page, '04-project');

    // The editor opens on the first image.
    await page.getByRole('link', { name: 'Annotate' }).click();
    await page.waitForURL(/\/annotate/);
    const firstId = await until('the editor', () => page.evaluate(() => window.__versaEditor?.imageId() ?? undefined));
    assert.equal(firstId, images[0].id);

    // Draw a box with the mouse (box tool, first class).
    const from = await screenOf(page, 40, 50);
    const to = await screenOf(page, 120, 110);
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2);
    await page.mouse.move(to.x, to.y);
    await page.mouse.up();
    const box = await until('the box saved', async () => {
      const anns = await apiGet<Ann[]>(`/api/images/${firstId}/annotations`);
      return anns.find((a) => a.annotation_type === 'bbox');
    });
    assert.equal(box.class_id, car.id);
    assert.ok(Math.abs(box.geometry.x! - 40) < 2 && Math.abs(box.geometry.y! - 50) < 2, JSON.stringify(box.geometry));
    assert.ok(Math.abs(box.geometry.width! - 80) < 2 && Math.abs(box.geometry.height! - 60) < 2, JSON.stringify(box.geometry));

    // A tiny accidental drag (5 screen pixels) saves nothing and says why.
    const flick = await screenOf(page, 200, 180);
    await page.mouse.move(flick.x, flick.y);
    await page.mouse.down();
    await page.mouse.move(flick.x + 5, flick.y + 5);
    await page.mouse.up();
    await page.getByText(/Box not saved: drag at least 8 screen pixels/).waitFor();
    assert.equal((await apiGet<Ann[]>(`/api/images/${firstId}/annotations`)).length, 1, 'the flick stored no box');

    // Draw a polygon: P, four clicks, Enter.
    await page.keyboard.press('p');
    for (const [x, y] of [[180, 40], [260, 60], [250, 150], [170, 130]]) {
      const p = await screenOf(page, x, y);
      await page.mouse.click(p.x, p.y);
    }
    await page.keyboard.press('Enter');
    const polygon = await until('the polygon saved', async () => {
      const anns = await apiGet<Ann[]>(`/api/images/${firstId}/annotations`);
      return anns.find((a) => a.annotation_type === 'polygon');
    });
    assert.equal(polygon.geometry.points!.length, 4);
    assert.equal(polygon.class_id, car.id);
    await screenshot(page, '05-editor-box-polygon');

    // The new polygon is not left selected: key 2 picks the class of the next shape and does not relabel it.
    const classOfPolygon = async () => (await apiGet<Ann>(`/api/annotations/${polygon.id}`)).class_id;
    await page.keyboard.press('2');
    await until('the active class shown', async () => (await page.getByTestId('active-class').innerText()).includes('person'));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await classOfPolygon(), car.id, 'a class key after drawing does not silently relabel the fresh shape');
    // Selecting it explicitly, then a class key, changes its class, said on screen.
    await page.keyboard.press('1');
    await page.keyboard.press('v');
    const insidePolygon = await screenOf(page, 215, 95);
    await page.mouse.click(insidePolygon.x, insidePolygon.y);
    await page.getByTestId('selected-class').waitFor();
    await page.keyboard.press('2');
    await until('class changed', async () => (await classOfPolygon()) === person.id);
    await page.getByText('Class changed: car → person').waitFor();

    // Undo the class change, then redo it.
    await page.keyboard.press('Control+z');
    await until('undone', async () => (await classOfPolygon()) === car.id);
    await page.keyboard.press('Control+Shift+z');
    await until('redone', async () => (await classOfPolygon()) === person.id);

    // Delete the box and undo: it comes back (as a new record with the same geometry).
    await page.keyboard.press('v');
    const inside = await screenOf(page, 80, 80);
    await page.mouse.click(inside.x, inside.y);
    await page.keyboard.press('Delete');
    await until('box deleted', async () => (await apiGet<Ann[]>(`/api/images/${firstId}/annotations`)).every((a) => a.annotation_type !== 'bbox'));
    await page.keyboard.press('Control+z');
    const restored = await until('box restored', async () => (await apiGet<Ann[]>(`/api/images/${firstId}/annotations`)).find((a) => a.annotation_type === 'bbox'));
    assert.deepEqual(restored.geometry, box.geometry);

    // The select tool drags the box 20 image pixels right; then its bottom-right handle stretches it by 30 × 20.
    const dragFrom = await screenOf(page, 80, 80);
    const dragTo = await screenOf(page, 100, 80);
    await page.mouse.move(dragFrom.x, dragFrom.y);
    await page.mouse.down();
    await page.mouse.move(dragTo.x, dragTo.y, { steps: 4 });
    await page.mouse.up();
    const bboxNow = async () => (await apiGet<Ann[]>(`/api/images/${firstId}/annotations`)).find((a) => a.annotation_type === 'bbox')!;
    const moved = await until('box moved', async () => {
      const b = await bboxNow();
      return Math.abs(b.geometry.x! - (box.geometry.x! + 20)) < 2 ? b : undefined;
    });
    assert.deepEqual([moved.geometry.y, moved.geometry.width, moved.geometry.height], [box.geometry.y, box.geometry.width, box.geometry.height]);
    const g = moved.geometry as { x: number; y: number; width: number; height: number };
    const corner = await screenOf(page, g.x + g.width, g.y + g.height);
    const stretched = await screenOf(page, g.x + g.width + 30, g.y + g.height + 20);
    await page.mouse.move(corner.x, corner.y);
    await page.mouse.down();
    await page.mouse.move(stretched.x, stretched.y, { steps: 4 });
    await page.mouse.up();
    const resized = await until('box resized', async () => {
      const b = await bboxNow();
      return Math.abs(b.geometry.width! - (g.width + 30)) < 2 ? b : undefined;
    });
    assert.ok(Math.abs(resized.geometry.height! - (g.height + 20)) < 2 && Math.abs(resized.geometry.x! - g.x) < 2, JSON.stringify(resized.geometry));

    // The help overlay lists the shortcuts.
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await screenshot(page, '06-editor-help');
    await page.keyboard.press('Escape');

    // Next image with D: the second image, which has no annotations.
    await page.keyboard.press('d');
    const secondId = await until('the next image', () => page.evaluate((first) => {
      const id = window.__versaEditor?.imageId();
      return id && id !== first ? id : undefined;
    }, firstId));
    assert.equal(secondId, images[1].id);
    assert.match(page.url(), new RegExp(`image=${secondId}`));
    assert.equal(await page.evaluate(() => window.__versaEditor!.controller.store!.items.size), 0);
    await screenshot(page, '07-editor-next');

    // Mask brush: M, one stroke saves a mask of the current class; Ctrl+Z takes it away again.
    await page.keyboard.press('m');
    const strokeFrom = await screenOf(page, 100, 100);
    const strokeTo = await screenOf(page, 160, 120);
    await page.mouse.move(strokeFrom.x, strokeFrom.y);
    await page.mouse.down();
    await page.mouse.move(strokeTo.x, strokeTo.y, { steps: 6 });
    await page.mouse.up();
    const mask = await until('the mask saved', async () => (await apiGet<Ann[]>(`/api/images/${secondId}/annotations`)).find((a) => a.annotation_type === 'mask'));
    const maskBox = (mask.geometry as unknown as { bbox: [number, number, number, number] | { width: number } }).bbox;
    assert.ok(Array.isArray(maskBox) ? maskBox[2] >= 60 : maskBox.width >= 60, JSON.stringify(mask.geometry).slice(0, 200));
    await page.keyboard.press('Control+z');
    await until('the mask undone', async () => (await apiGet<Ann[]>(`/api/images/${secondId}/annotations`)).length === 0);

    // Export COCO from the project page's Export tab and download the file.
    await page.goto(`${base}/projects/${projectId}?tab=export`);
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const outcome = await until('export', async () => {
      if (await page.getByText('Export is not available').isVisible()) return 'the page says export is not available';
      if (await page.getByRole('link', { name: /Download/ }).isVisible()) return 'done';
      if (await page.locator('.banner.error').isVisible()) return `error: ${await page.locator('.banner.error').innerText()}`;
      return undefined;
    }, 30_000);
    await screenshot(page, '08-project-export');
    assert.equal(outcome, 'done');
    const href = await page.getByRole('link', { name: /Download/ }).getAttribute('href');
    const download = await page.request.get(base + href);
    assert.equal(download.status(), 200, await download.text());
    const coco = await download.json();
    assert.equal(coco.images.length, 3);
    assert.equal(coco.annotations.length, 2);
    assert.deepEqual(coco.categories.map((c: { name: string }) => c.name).sort(), ['car', 'person']);

    // Dashboard shows the project with its counts.
    await page.goto(`${base}/`);
    await page.getByText('Street scenes').waitFor();
    await page.locator('.project-card .counts', { hasText: '1 annotated' }).waitFor();
    await screenshot(page, '09-dashboard');
    assert.deepEqual(errors, []);
  });

  it('splits, creates an augmented version from the generated form, shows lineage and diff, registers models, runs the detector and SAM', async () => {
    const base = server.baseUrl;
    const post = async <T>(url: string, data: unknown, status = 201): Promise<T> => {
      const res = await page.request.post(base + url, { data: data as object });
      assert.equal(res.status(), status, `${url}: ${await res.text()}`);
      return (await res.json()) as T;
    };
    await post('/api/auth/register', { email: 'grace@example.com', password: 'correct horse battery' });
    await post('/api/auth/login', { email: 'grace@example.com', password: 'correct horse battery' }, 200);
    const { id: projectId } = await post<{ id: number }>('/api/projects', { name: 'Squares' });
    const red: Square = { x: 30, y: 40, width: 36, height: 30, colour: [255, 0, 0] };
    const green: Square = { x: 120, y: 20, width: 50, height: 70, colour: [0, 204, 0] };
    const pngs = await Promise.all([0, 1, 2, 3].map((i) => squaresPng(200, 120, [{ ...red, x: red.x + i * 3 }, green])));
    const imageIds: number[] = [];
    for (const [i, buffer] of pngs.entries()) {
      const one = await page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: `sq-${i}.png`, mimeType: 'image/png', buffer } } });
      assert.equal(one.status(), 201, await one.text());
      imageIds.push((await one.json()).images[0].id);
    }
    const { id: classId } = await post<{ id: number }>(`/api/projects/${projectId}/classes`, { name: 'thing' });
    await post(`/api/images/${imageIds[0]}/annotations`, { class_id: classId, annotation_type: 'bbox', geometry: { x: 30, y: 40, width: 36, height: 30 } });

    // Splits: a seeded random split, counts shown.
    await page.goto(`${base}/projects/${projectId}?tab=splits`);
    await page.getByLabel('train percent').fill('50');
    await page.getByLabel('valid percent').fill('25');
    await page.getByLabel('test percent').fill('25');
    await page.getByLabel('Split seed').fill('7');
    await page.getByRole('button', { name: 'Split images' }).click();
    await page.getByTestId('split-result').waitFor();
    const splits = await apiGet<{ counts: { train: number; valid: number; test: number }; unassigned: number }>(`/api/projects/${projectId}/splits`);
    assert.equal(splits.unassigned, 0);
    assert.equal(splits.counts.train + splits.counts.valid + splits.counts.test, 4);
    assert.match(await page.getByTestId('split-counts').innerText(), new RegExp(`${splits.counts.train}\\s*train`));
    await screenshot(page, '10-project-splits');

    // Versions: the augmentation form is generated from /api/pipeline/defaults; flip horizontally, applied to all splits.
    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.locator('summary', { hasText: 'Augmentation' }).click();
    const defaults = await apiGet<{ options: { augmentation_config: { key: string }[]; preprocessing_config: { key: string }[] } }>('/api/pipeline/defaults');
    for (const o of [...defaults.options.augmentation_config, ...defaults.options.preprocessing_config]) {
      assert.ok((await page.locator(`[name="${o.key}"], [name^="${o.key}:"]`).count()) > 0, `a field for ${o.key}`);
    }
    await page.locator('input[name="flip_horizontal"]').check();
    await page.locator('select[name="apply_to"]').selectOption('all');
    assert.equal(await page.locator('input[name="enabled"]').first().isChecked(), true, 'changing an option turns augmentation on');
    await page.locator('input[name="outputs_per_image"]').fill('2');
    await page.fill('input[name=version-name]', 'flipped');
    await screenshot(page, '11-version-form');
    await page.getByRole('button', { name: 'Create version' }).click();
    await page.locator('tr[data-version="1"] .status.ready').waitFor({ timeout: 30_000 });
    const [v1] = await apiGet<{ id: number; status: string; augmentation_config: Record<string, unknown>; image_counts: { total: number } }[]>(`/api/projects/${projectId}/versions`);
    assert.equal(v1.status, 'ready');
    assert.equal(v1.augmentation_config.flip_horizontal, true);
    assert.equal(v1.augmentation_config.enabled, true);
    assert.equal(v1.augmentation_config.outputs_per_image, 2);
    assert.equal(v1.image_counts.total, 8, 'two augmented outputs per image');

    // Lineage of one output image.
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Images' }).click();
    await page.locator('.version-image-list button').first().click();
    // Flips are drawn at random per output, so the page shows whatever steps the first output went through.
    await page.getByTestId('lineage').locator('li').first().waitFor();
    const outputs = await apiGet<{ filename: string; lineage: { op: string }[]; annotations: { annotation_type: string }[] }[]>(`/api/projects/${projectId}/versions/${v1.id}/images`);
    const firstName = await page.locator('.version-image-list button').first().innerText();
    const first = outputs.find((o) => o.filename === firstName)!;
    // Each step is a readable sentence, with the exact step as its tooltip.
    const steps = page.getByTestId('lineage-steps').locator('li');
    assert.deepEqual((await steps.evaluateAll((els) => els.map((e) => JSON.parse(e.getAttribute('title')!).op))), first.lineage.map((step) => step.op));
    const texts = await steps.allInnerTexts();
    if (first.lineage[0]?.op === 'resize') assert.match(texts[0], /^Resized to \d+×\d+/);
    // The preview draws the output's boxes over it.
    assert.equal(
      await page.getByTestId('lineage').locator('svg [data-shape]').count(),
      first.annotations.filter((a) => a.annotation_type !== 'classification').length,
    );
    await screenshot(page, '12-version-lineage');

    // A second version without augmentation, and the diff between them.
    await page.fill('input[name=version-name]', 'plain');
    await page.locator('input[name="enabled"]').first().uncheck();
    await page.getByRole('button', { name: 'Create version' }).click();
    await page.locator('tr[data-version="2"] .status.ready').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Compare' }).click();
    const diffText = await page.getByTestId('diff').innerText();
    assert.match(diffText, /augmentation_config/);
    assert.match(diffText, /Output files: 8 → 4/);
    await screenshot(page, '13-version-diff');

    // Models: upload a detector through the page; the SAM pair through the API.
    const modelDir = await mkdtemp(join(tmpdir(), 'versa-models-'));
    const detectorPath = join(modelDir, 'squares.onnx');
    await writeFile(detectorPath, buildYoloModel('v8'));
    await page.getByRole('tab', { name: 'Models' }).click();
    await page.setInputFiles('[data-testid=model-file]', detectorPath);
    await page.getByRole('button', { name: 'Upload model' }).click();
    await page.locator('tr[data-model="squares"]').waitFor();
    for (const [name, bytes] of [['sam_encoder.onnx', buildSamEncoder()], ['sam_decoder.onnx', buildSamDecoder()]] as const) {
      const res = await page.request.post(`${base}/api/projects/${projectId}/models/upload`, { multipart: { file: { name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) } } });
      assert.equal(res.status(), 201, await res.text());
    }
    const models = await apiGet<{ name: string; task: string; lifecycle: string }[]>(`/api/projects/${projectId}/models`);
    assert.deepEqual(models.map((m) => m.task).sort(), ['detect', 'sam-decoder', 'sam-encoder']);
    await page.getByLabel('Lifecycle of squares').selectOption('production');
    await until('promoted', async () => (await apiGet<{ name: string; lifecycle: string }[]>(`/api/projects/${projectId}/models`)).find((m) => m.name === 'squares')?.lifecycle === 'production');

    // Auto-annotate the unannotated images (three of the four) from the project page.
    await page.reload();
    await page.getByRole('button', { name: 'Auto-annotate' }).click();
    const autoText = await until('auto-annotate result', async () => (await page.getByTestId('auto-annotate-result').isVisible()) && page.getByTestId('auto-annotate-result').innerText(), 30_000);
    assert.match(autoText, /Created 6 annotations/);
    await screenshot(page, '14-models-auto-annotate');
    const annotationsOf = (id: number) => apiGet<{ id: number; source: string; annotation_type: string; class_id: number; geometry: { points?: number[][] } }[]>(`/api/images/${id}/annotations`);
    assert.equal((await annotationsOf(imageIds[0])).length, 1, 'the annotated image was skipped');
    assert.equal((await annotationsOf(imageIds[1])).length, 2);

    // Editor: run the detector on the first image, then undo it as one step.
    await page.goto(`${base}/projects/${projectId}/annotate?image=${imageIds[0]}`);
    await until('the editor', () => page.evaluate(() => window.__versaEditor?.imageId() ?? undefined));
    await page.getByRole('button', { name: 'Run detector on this image' }).click();
    await page.getByTestId('detector-result').waitFor();
    assert.equal((await annotationsOf(imageIds[0])).length, 3);
    await page.keyboard.press('Control+z');
    await until('detector run undone', async () => (await annotationsOf(imageIds[0])).length === 1);

    // SAM: S, click inside the green square, preview, Enter saves a polygon around it.
    await page.keyboard.press('s');
    const inside = await screenOf(page, 145, 55);
    await page.mouse.click(inside.x, inside.y);
    await page.getByText('Enter to accept').waitFor();
    await screenshot(page, '15-editor-sam-preview');
    assert.equal((await annotationsOf(imageIds[0])).length, 1, 'a preview saves nothing');
    await page.keyboard.press('Enter');
    const samAnn = await until('SAM polygon saved', async () => (await annotationsOf(imageIds[0])).find((a) => a.source === 'sam'));
    assert.equal(samAnn.annotation_type, 'polygon');
    const xs = samAnn.geometry.points!.map((p) => p[0]), ys = samAnn.geometry.points!.map((p) => p[1]);
    assert.ok(Math.abs(Math.min(...xs) - green.x) <= 2 && Math.abs(Math.max(...xs) - (green.x + green.width)) <= 2, JSON.stringify(samAnn.geometry));
    assert.ok(Math.abs(Math.min(...ys) - green.y) <= 2 && Math.abs(Math.max(...ys) - (green.y + green.height)) <= 2, JSON.stringify(samAnn.geometry));
    await screenshot(page, '16-editor-sam-accepted');

    // Esc drops a preview without saving.
    await page.mouse.click(inside.x, inside.y);
    await page.getByText('Enter to accept').waitFor();
    await page.keyboard.press('Escape');
    await page.getByText('left click inside an object').waitFor();
    assert.equal((await annotationsOf(imageIds[0])).length, 2);
    await rm(modelDir, { recursive: true, force: true });
    assert.deepEqual(errors, []);
  });
  it('filters the grid by class, adds members, submits for review, approves by keyboard, shows the lock to a second user', async () => {
    const base = server.baseUrl;
    const post = async <T>(url: string, data: unknown, status = 201): Promise<T> => {
      const res = await page.request.post(base + url, { data: data as object });
      assert.equal(res.status(), status, `${url}: ${await res.text()}`);
      return (await res.json()) as T;
    };
    /** Signs the browser in as someone else (the session cookie is replaced). */
    const signIn = (email: string) => post('/api/auth/login', { email, password: 'correct horse battery' }, 200);
    /** Another user's API client, with a bearer token, while the browser stays signed in as it is. */
    const asUser = async (email: string) => {
      const token = (await post<{ token: string }>('/api/auth/login', { email, password: 'correct horse battery' }, 200)).token;
      return async (method: string, url: string, body?: unknown) => {
        const res = await fetch(base + url, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null };
      };
    };
    for (const email of ['ann@example.com', 'rita@example.com', 'olga@example.com']) {
      await post('/api/auth/register', { email, password: 'correct horse battery', display_name: email.split('@')[0].replace(/^./, (c) => c.toUpperCase()) });
    }
    const ann = await asUser('ann@example.com');
    const annId = (await ann('GET', '/api/auth/me')).body.id as number;
    await signIn('olga@example.com');

    // Olga's project: three images; the first has a cat, the second a dog, the third nothing.
    const { id: projectId } = await post<{ id: number }>('/api/projects', { name: 'Team work' });
    const files = await writeImages(imageDir);
    const imageIds: number[] = [];
    for (const file of files) {
      const res = await page.request.post(`${base}/api/projects/${projectId}/images`, { multipart: { files: { name: file.split('/').pop()!, mimeType: 'image/png', buffer: await sharp(file).png().toBuffer() } } });
      assert.equal(res.status(), 201, await res.text());
      imageIds.push((await res.json()).images[0].id);
    }
    const { id: cat } = await post<{ id: number }>(`/api/projects/${projectId}/classes`, { name: 'cat' });
    const { id: dog } = await post<{ id: number }>(`/api/projects/${projectId}/classes`, { name: 'dog' });
    const { id: catBox } = await post<{ id: number }>(`/api/images/${imageIds[0]}/annotations`, { class_id: cat, annotation_type: 'bbox', geometry: { x: 40, y: 50, width: 80, height: 60 } });
    await post(`/api/images/${imageIds[1]}/annotations`, { class_id: dog, annotation_type: 'bbox', geometry: { x: 70, y: 50, width: 80, height: 60 } });

    // The grid, filtered by class (on the server: the count is the filtered total), then by "not annotated".
    const gridIds = () => page.evaluate(() => Array.from(document.querySelectorAll<HTMLAnchorElement>('.grid-cell')).map((a) => Number(new URL(a.href).searchParams.get('image'))).sort((x, y) => x - y));
    await page.goto(`${base}/projects/${projectId}`);
    await until('all three images', async () => (await gridIds()).length === 3);
    await page.getByLabel('Class filter').selectOption({ label: 'cat' });
    await until('the cat image alone', async () => JSON.stringify(await gridIds()) === JSON.stringify([imageIds[0]]));
    assert.match(await page.getByTestId('grid-count').innerText(), /^1 image matches the filters/);
    await screenshot(page, '17-project-filter-class');
    await page.getByLabel('Class filter').selectOption({ label: 'dog' });
    await until('the dog image alone', async () => JSON.stringify(await gridIds()) === JSON.stringify([imageIds[1]]));
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByLabel('Annotated filter').selectOption('no');
    await until('the unannotated image alone', async () => JSON.stringify(await gridIds()) === JSON.stringify([imageIds[2]]));
    await page.getByRole('button', { name: 'Clear filters' }).click();

    // Members: add Ann as annotator and Rita as annotator, then make Rita a reviewer.
    await page.getByRole('tab', { name: 'Members' }).click();
    await page.locator('tr[data-member="olga@example.com"]').waitFor();
    for (const email of ['ann@example.com', 'rita@example.com']) {
      await page.fill('input[name=member-email]', email);
      await page.locator('select[name=member-role]').selectOption('annotator');
      await page.getByRole('button', { name: 'Add member' }).click();
      await page.locator(`tr[data-member="${email}"]`).waitFor();
    }
    await page.getByLabel('Role of rita@example.com').selectOption('reviewer');
    await page.getByText('rita@example.com is now reviewer').waitFor();
    const members = await apiGet<{ email: string; role: string }[]>(`/api/projects/${projectId}/members`);
    assert.deepEqual(Object.fromEntries(members.map((m) => [m.email, m.role])), { 'olga@example.com': 'owner', 'ann@example.com': 'annotator', 'rita@example.com': 'reviewer' });
    await screenshot(page, '18-project-members');

    // The editor takes the lock; a class change shows in the history, and reverting restores the class.
    await page.goto(`${base}/projects/${projectId}/annotate?image=${imageIds[0]}`);
    await until('the editor', () => page.evaluate(() => window.__versaEditor?.imageId() ?? undefined));
    await page.getByTestId('lock-status').filter({ hasText: 'locked by you' }).waitFor();
    assert.equal((await apiGet<{ email: string }>(`/api/images/${imageIds[0]}/lock`)).email, 'olga@example.com');
    await page.keyboard.press('v');
    const inside = await screenOf(page, 80, 80);
    await page.mouse.click(inside.x, inside.y);
    await page.keyboard.press('2');
    await until('class changed', async () => (await apiGet<{ class_id: number }>(`/api/annotations/${catBox}`)).class_id === dog);
    const history = page.getByTestId('annotation-history');
    await until('two revisions', async () => (await history.locator('li').count()) === 2);
    await history.locator('li[data-action="create"]').getByRole('button', { name: 'Revert to this' }).click();
    await until('reverted', async () => (await apiGet<{ class_id: number }>(`/api/annotations/${catBox}`)).class_id === cat);
    await until('the revert in the history', async () => (await page.getByTestId('annotation-history').locator('li[data-action="revert"]').count()) === 1);

    // Submit for review from the editor.
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByTestId('review-state').filter({ hasText: 'Waiting for review' }).waitFor();
    assert.equal((await apiGet<{ review_state: string }>(`/api/images/${imageIds[0]}`)).review_state, 'pending');
    await screenshot(page, '19-editor-history-submitted');
    // Leaving the editor gives the lock back.
    await page.getByRole('link', { name: 'Team work' }).click();
    await page.waitForURL(`${base}/projects/${projectId}`);
    await until('lock released', async () => (await apiGet<unknown>(`/api/images/${imageIds[0]}/lock`)) === null);

    // Ann submits the dog image; Olga assigns her the third.
    assert.equal((await ann('POST', `/api/projects/${projectId}/reviews`, { image_id: imageIds[1], comment: 'one dog' })).status, 201);
    await post(`/api/projects/${projectId}/assignments`, { user_id: annId, image_ids: [imageIds[2]] });

    // Rita reviews by keyboard: A approves the first; C without a comment asks for one, then Enter sends it back.
    await signIn('rita@example.com');
    await page.goto(`${base}/projects/${projectId}/review`);
    await page.getByTestId('review-position').filter({ hasText: '1 of 2 waiting' }).waitFor();
    await page.getByTestId('review-annotations').locator('[data-shape="bbox"]').first().waitFor();
    await screenshot(page, '20-review');
    await page.keyboard.press('a');
    await page.getByTestId('review-position').filter({ hasText: '1 of 1 waiting' }).waitFor();
    const reviews = async () => apiGet<{ image_id: number; status: string; decided_by: number | null; decision_comment: string }[]>(`/api/projects/${projectId}/reviews`);
    const first = (await reviews()).find((r) => r.image_id === imageIds[0])!;
    assert.equal(first.status, 'approved');
    assert.equal(first.decided_by, (await apiGet<{ id: number }>('/api/auth/me')).id);
    assert.equal((await apiGet<{ review_state: string }>(`/api/images/${imageIds[0]}`)).review_state, 'approved');
    await page.keyboard.press('c');
    await page.getByRole('alert').filter({ hasText: 'Say what to change' }).waitFor();
    await page.keyboard.type('Box the second dog too');
    await page.keyboard.press('Enter');
    await page.getByText('No reviews waiting').waitFor();
    const second = (await reviews()).find((r) => r.image_id === imageIds[1])!;
    assert.equal(second.status, 'changes');
    assert.equal(second.decision_comment, 'Box the second dog too');
    await screenshot(page, '21-review-done');

    // Ann holds the third image: Rita's editor shows who, stays read only, and takes over once Ann lets go.
    assert.equal((await ann('POST', `/api/images/${imageIds[2]}/lock`)).status, 200);
    await page.goto(`${base}/projects/${projectId}/annotate?image=${imageIds[2]}`);
    await until('the editor', () => page.evaluate(() => window.__versaEditor?.imageId() ?? undefined));
    const lockStatus = page.getByTestId('lock-status');
    await lockStatus.filter({ hasText: 'Locked by Ann' }).waitFor();
    assert.match(await lockStatus.innerText(), /read only/);
    await page.getByTestId('read-only-hint').waitFor();
    await page.keyboard.press('b');
    const from = await screenOf(page, 40, 40);
    const to = await screenOf(page, 120, 100);
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y);
    await page.mouse.up();
    await screenshot(page, '22-editor-locked-by-another');
    await page.waitForTimeout(300);
    assert.deepEqual(await apiGet<unknown[]>(`/api/images/${imageIds[2]}/annotations`), [], 'nothing drawn while read only');
    assert.equal((await ann('DELETE', `/api/images/${imageIds[2]}/lock`)).status, 204);
    await until('the lock taken over', async () => (await lockStatus.innerText()).includes('locked by you'), 15_000);
    assert.equal((await ann('GET', `/api/images/${imageIds[2]}/lock`)).body.email, 'rita@example.com');

    // Ann's queue: the image sent back with the comment, and the assigned one.
    await signIn('ann@example.com');
    await page.goto(`${base}/queue`);
    await page.locator(`li[data-queue-image="${imageIds[1]}"]`, { hasText: 'Box the second dog too' }).waitFor();
    await page.locator(`li[data-queue-image="${imageIds[2]}"]`, { hasText: 'assigned' }).waitFor();
    assert.equal(await page.locator('.queue-list li').count(), 2);
    await screenshot(page, '23-my-queue');
    assert.deepEqual(errors, []);
  });
});
