/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { SKIP_REASON, ensureWebBuilt, launchBrowser, screenshot, startServer, until, type Browser, type LiveServer } from './browser-harness.js';

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
    ensureWebBuilt();
    server = await startServer();
    browser = await launchBrowser();
    page = browser.page;
    page.on('pageerror', (e) => errors.push(e.message));
    imageDir = await mkdtemp(join(tmpdir(), 'versa-images-'));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(imageDir, { recursive: true, force: true });
  });

  const apiGet = async <T>(url: string): Promise<T> => {
    const res = await page.request.get(server.baseUrl + url);
    assert.equal(res.status(), 200, `${url}: ${await res.text()}`);
    return (await res.json()) as T;
  };

  it('registers, creates a project, uploads, labels with box and polygon, changes class, undoes, moves on, exports', async (t) => {
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

    // The new polygon is selected: key 2 moves it to the second class.
    const classOfPolygon = async () => (await apiGet<Ann>(`/api/annotations/${polygon.id}`)).class_id;
    await page.keyboard.press('2');
    await until('class changed', async () => (await classOfPolygon()) === person.id);

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

    // Export COCO from the project page, where the server has the route.
    await page.goto(`${base}/projects/${projectId}`);
    await page.getByRole('button', { name: 'Export' }).click();
    const outcome = await until('export', async () => {
      if (await page.getByText('Export is not available').isVisible()) return 'missing';
      if (await page.getByRole('link', { name: /Download/ }).isVisible()) return 'done';
      if (await page.locator('.banner.error').isVisible()) return `error: ${await page.locator('.banner.error').innerText()}`;
      return undefined;
    }, 30_000);
    await screenshot(page, '08-project-export');
    if (outcome === 'missing') {
      t.diagnostic('export step skipped: POST /api/projects/{id}/export is not on this server yet');
    } else {
      assert.equal(outcome, 'done');
      const href = await page.getByRole('link', { name: /Download/ }).getAttribute('href');
      const coco = await (await page.request.get(base + href)).json();
      assert.equal(coco.images.length, 3);
      assert.equal(coco.annotations.length, 2);
      assert.deepEqual(coco.categories.map((c: { name: string }) => c.name).sort(), ['car', 'person']);
    }

    // Dashboard shows the project with its counts.
    await page.goto(`${base}/`);
    await page.getByText('Street scenes').waitFor();
    await page.locator('.project-card .counts', { hasText: '1 annotated' }).waitFor();
    await screenshot(page, '09-dashboard');
    assert.deepEqual(errors, []);
  });
});
