/// <reference lib="dom" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { buildZip } from '../helpers/zip-build.js';
import { livePageSuite, apiCaller, SKIP_REASON, screenshot } from './browser-harness.js';

const picture = (r: number) => sharp({ create: { width: 80, height: 60, channels: 3, background: { r, g: 120, b: 60 } } }).jpeg().toBuffer();

/**
 * The upload page's "Labelled dataset (zip)" form (issue 18): an archive with byte-identical images under different
 * names goes into an existing project, every entry kept with its labels, and the page says what became of each.
 */
describe('upload page in Chromium: a labelled dataset (zip) imported into the project', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();

  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  it('shows what was added, merged, kept with shared bytes and left out; every entry has its own labels', async () => {
    await call('post', '/api/auth/register', { email: 'ines@example.com', password: 'correct horse battery' });
    await call('post', '/api/auth/login', { email: 'ines@example.com', password: 'correct horse battery' }, 200);
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Imported labels' })).id;
    await call('post', `/api/projects/${projectId}/classes`, { name: 'cat' });
    const same = await picture(200);
    const uploaded = await live.page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name: 'up.jpg', mimeType: 'image/jpeg', buffer: same } } });
    assert.equal(uploaded.status(), 201, await uploaded.text());

    // a.jpg and b.jpg have the bytes of up.jpg: a.jpg's label goes onto up.jpg, b.jpg becomes an image of its own.
    const zip = await buildZip([
      { name: 'data.yaml', data: 'train: train/images\nnames: [cat, dog]\n' },
      { name: 'train/images/a.jpg', data: same },
      { name: 'train/labels/a.txt', data: '0 0.5 0.5 0.2 0.2\n' },
      { name: 'train/images/b.jpg', data: same },
      { name: 'train/labels/b.txt', data: '0 0.25 0.25 0.1 0.1\n1 0.75 0.75 0.1 0.1\n' },
      { name: 'train/images/c.jpg', data: await picture(40) },
      { name: 'train/labels/c.txt', data: '1 0.5 0.5 0.5 0.5\n' },
      { name: 'train/images/d.jpg', data: await picture(90) },
      // The first box lies outside the image: left out.
      { name: 'train/labels/d.txt', data: '0 1.5 1.5 0.1 0.1\n0 0.5 0.5 0.1 0.1\n' },
    ]);

    await live.page.goto(`${base()}/projects/${projectId}/upload`);
    const form = live.page.getByRole('form', { name: 'Import labelled dataset' });
    await form.getByRole('heading', { name: 'Labelled dataset (zip)' }).waitFor();
    await live.page.setInputFiles('[data-testid=dataset-input]', { name: 'labelled.zip', mimeType: 'application/zip', buffer: zip });
    await form.getByRole('button', { name: 'Import' }).click();
    const counts = live.page.getByTestId('import-counts');
    await counts.waitFor({ timeout: 20_000 });
    assert.equal(
      (await counts.innerText()).replace(/\s+/g, ' ').trim(),
      '4 image entries read: 3 images added, 1 already in the project (labels added), 5 annotations.',
    );
    assert.match(await live.page.getByTestId('import-shared').innerText(), /^1 image has the same bytes as another image: kept, each with its own labels, the file stored once/);
    const result = live.page.getByTestId('import-result');
    await result.getByText('b.jpg: same bytes as up.jpg').waitFor();
    assert.match(await result.innerText(), /Classes created: dog/);
    assert.match(await live.page.getByTestId('import-skipped').innerText(), /Left out \(1\)/);
    await result.getByText('d.jpg: annotation 1 (bbox, class').waitFor();
    assert.match(await result.innerText(), /d\.jpg: annotation 1 \(bbox, class "[a-z]+"\): box lies outside the 80×60 image/);
    await screenshot(live.page, 'upload-import-labelled-zip');

    // The project's images, each with the labels of its own entry.
    const images = await call<{ id: number; original_name: string; annotation_count: number; sha256: string }[]>('get', `/api/projects/${projectId}/images`);
    assert.deepEqual(images.map((i) => [i.original_name, i.annotation_count]), [['up.jpg', 1], ['b.jpg', 2], ['c.jpg', 1], ['d.jpg', 1]]);
    assert.equal(images[0].sha256, images[1].sha256);
    const classes = new Map((await call<{ id: number; name: string }[]>('get', `/api/projects/${projectId}/classes`)).map((c) => [c.id, c.name]));
    const labels = async (imageId: number) =>
      (await call<{ class_id: number; source: string }[]>('get', `/api/images/${imageId}/annotations`)).map((a) => `${classes.get(a.class_id)}:${a.source}`);
    assert.deepEqual(await labels(images[0].id), ['cat:import']);
    assert.deepEqual(await labels(images[1].id), ['cat:import', 'dog:import']);
    assert.deepEqual(await labels(images[2].id), ['dog:import']);
    const project = await call<{ image_count: number; annotation_count: number }>('get', `/api/projects/${projectId}`);
    assert.deepEqual([project.image_count, project.annotation_count], [4, 5]);
    assert.deepEqual(live.errors, [], 'no errors on the page');
  });

  it('the new-project page says what an import kept with shared bytes and left out before opening the project', async () => {
    const same = await picture(10);
    const zip = await buildZip([
      { name: 'data.yaml', data: 'train: train/images\nnames: [cat]\n' },
      { name: 'train/images/a.jpg', data: same },
      { name: 'train/labels/a.txt', data: '0 0.5 0.5 0.2 0.2\n' },
      { name: 'train/images/b.jpg', data: same },
      // Outside the image: left out.
      { name: 'train/labels/b.txt', data: '0 1.5 1.5 0.1 0.1\n' },
    ]);
    await live.page.goto(`${base()}/projects/new`);
    const form = live.page.getByRole('form', { name: 'Import project' });
    await form.locator('input[name=file]').setInputFiles({ name: 'pets.zip', mimeType: 'application/zip', buffer: zip });
    await form.getByRole('button', { name: 'Import' }).click();
    const counts = form.getByTestId('import-counts');
    await counts.waitFor({ timeout: 20_000 });
    assert.equal(
      (await counts.innerText()).replace(/\s+/g, ' ').trim(),
      '2 image entries read: 2 images, 1 of them with the same bytes as another (the file stored once), 1 annotation. Items left out: 1.',
    );
    await form.getByText('b.jpg: annotation 1 (bbox, class "cat"): box lies outside the').waitFor();
    await form.getByRole('link', { name: /^Open / }).click();
    await live.page.waitForURL(/\/projects\/\d+$/);
    assert.deepEqual(live.errors, [], 'no errors on the page');
  });
});
