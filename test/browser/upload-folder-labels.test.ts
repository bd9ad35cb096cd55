/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { closeLivePage, openLivePage, apiCaller, SKIP_REASON, screenshot, type Browser, type LiveServer } from './browser-harness.js';

const picture = (r: number) => sharp({ create: { width: 80, height: 60, channels: 3, background: { r, g: 120, b: 60 } } }).jpeg().toBuffer();

/** A YOLO folder as Ultralytics writes it: data.yaml beside images/ and labels/. */
const LABELS: Record<string, string> = {
  a: '0 0.5 0.5 0.25 0.5\n',
  b: '0 0.25 0.25 0.25 0.5\n1 0.75 0.75 0.25 0.5\n',
  c: '1 0.5 0.5 0.5 0.5\n',
};

/**
 * Issue 18: a folder of images with their label files, chosen on the upload page, is imported with its labels (zipped
 * in the browser under each file's path in the folder and sent to the project's import route), not refused row by row.
 */
describe('upload page in Chromium: a folder with labels imported with them', { skip: SKIP_REASON ?? false }, () => {
  let server: LiveServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  const errors: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-folder-labels-'));
    const folder = join(dir, 'shipment');
    await mkdir(join(folder, 'images'), { recursive: true });
    await mkdir(join(folder, 'labels'), { recursive: true });
    await writeFile(join(folder, 'data.yaml'), 'names: [Box, pallet]\n');
    for (const [i, stem] of Object.keys(LABELS).entries()) {
      await writeFile(join(folder, 'images', `${stem}.jpg`), await picture(40 + 60 * i));
      await writeFile(join(folder, 'labels', `${stem}.txt`), LABELS[stem]);
    }
    ({ server, browser, page } = await openLivePage(errors));
  });
  after(async () => {
    await closeLivePage({ browser, server });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const base = () => server.baseUrl;
  const call = apiCaller(() => page, base);

  it('refuses new classes when asked, then imports the images with their boxes and the classes of data.yaml', async () => {
    await call('post', '/api/auth/register', { email: 'oda@example.com', password: 'correct horse battery' });
    await call('post', '/api/auth/login', { email: 'oda@example.com', password: 'correct horse battery' }, 200);
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Warehouse' })).id;
    await call('post', `/api/projects/${projectId}/classes`, { name: 'box' });

    await page.goto(`${base()}/projects/${projectId}/upload`);
    // The "Choose a folder" input (webkitdirectory): Chromium gives each file its path inside the folder.
    await page.setInputFiles('[data-testid=folder-input]', join(dir, 'shipment'));
    const banner = page.getByTestId('labels-found');
    await banner.waitFor();
    const text = (await banner.innerText()).replace(/\s+/g, ' ');
    assert.match(text, /This selection has 4 label files beside its images/);
    // The old dead end (zip it yourself) is gone: the banner imports the selection itself.
    assert.doesNotMatch(text, /zip the folder/);
    assert.equal(await page.locator('table.uploads tr').count(), 0, 'no file is uploaded (or refused) before the user chooses');

    // "pallet" is not a class of the project: with "Refuse the import" the server's 422 shows in the banner, nothing is added.
    await banner.getByLabel('Classes the project does not have').selectOption('refuse');
    await banner.getByRole('button', { name: 'Import with labels' }).click();
    const alert = banner.getByRole('alert');
    await alert.waitFor({ timeout: 20_000 });
    assert.match(await alert.innerText(), /^Import failed, nothing was changed: .*pallet.*\(HTTP 422\)/s);
    assert.equal((await call<unknown[]>('get', `/api/projects/${projectId}/images`)).length, 0);
    assert.equal(await banner.getByRole('button', { name: 'Import with labels' }).isEnabled(), true, 'the buttons are enabled again after a failure');

    await banner.getByLabel('Classes the project does not have').selectOption('create');
    await banner.getByRole('button', { name: 'Import with labels' }).click();
    const counts = banner.getByTestId('import-counts');
    await counts.waitFor({ timeout: 20_000 });
    assert.equal(
      (await counts.innerText()).replace(/\s+/g, ' ').trim(),
      '3 image entries read: 3 images added, 0 already in the project (labels added), 4 annotations.',
    );
    const result = banner.getByTestId('import-result');
    assert.match(await result.innerText(), /Classes created: pallet/);
    assert.match(await result.innerText(), /Classes matched: box/);
    assert.equal(await page.getByTestId('import-skipped').innerText(), 'Nothing left out.');
    assert.equal(await page.locator('table.uploads tr').count(), 0, 'no image went through the plain upload');
    await screenshot(page, 'upload-folder-labels');

    // Every image with the boxes of its label file, in pixels of the 80×60 image, under the project's classes.
    const classes = await call<{ id: number; name: string }[]>('get', `/api/projects/${projectId}/classes`);
    assert.deepEqual(classes.map((c) => c.name).sort(), ['box', 'pallet']);
    const className = new Map(classes.map((c) => [c.id, c.name]));
    const images = await call<{ id: number; original_name: string; annotation_count: number }[]>('get', `/api/projects/${projectId}/images`);
    assert.deepEqual(images.map((i) => [i.original_name, i.annotation_count]).sort(), [['a.jpg', 1], ['b.jpg', 2], ['c.jpg', 1]]);
    const boxes = async (name: string) => {
      const image = images.find((i) => i.original_name === name)!;
      const annotations = await call<{ class_id: number; annotation_type: string; geometry: Record<string, number>; source: string }[]>(
        'get',
        `/api/images/${image.id}/annotations`,
      );
      return annotations
        .map((a) => `${className.get(a.class_id)} ${a.annotation_type} ${a.source} ${['x', 'y', 'width', 'height'].map((k) => Math.round(a.geometry[k])).join(',')}`)
        .sort();
    };
    assert.deepEqual(await boxes('a.jpg'), ['box bbox import 30,15,20,30']);
    assert.deepEqual(await boxes('b.jpg'), ['box bbox import 10,0,20,30', 'pallet bbox import 50,30,20,30']);
    assert.deepEqual(await boxes('c.jpg'), ['pallet bbox import 20,15,40,30']);

    await banner.getByRole('button', { name: 'Close' }).click();
    await banner.waitFor({ state: 'detached' });
    assert.deepEqual(errors, [], 'no errors on the page');
  });
});
