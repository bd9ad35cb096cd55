import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { insertImageRow } from '../helpers/image-rows.js';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { buildYoloModel } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const run = promisify(execFile);
const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
const JOURNEY = new URL('../../clients/python/tests/journey.py', import.meta.url).pathname;
const PAGED_IMAGES = 1_205;

/**
 * The Python client (clients/python) through a whole notebook journey against a live server: a labelled YOLO folder,
 * plain images, classes and annotations, paging past 1,000 images, a version waited for, downloaded and unpacked,
 * training refused cleanly, a model run on a local image. The script prints what it saw; this asserts it.
 */
describe('Python client journey against a live server', { timeout: 10 * 60_000 }, () => {
  let t: TestApp;
  let base: string;
  let work: string;
  let pagingProject: number;
  let pagingToken: string;

  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = await mkdtemp(join(tmpdir(), 'versa-py-journey-'));
    await cp(join(FIXTURES, 'indian-vehicles-yolo'), join(work, 'vehicles'), { recursive: true });
    await cp(join(FIXTURES, 'fresh-rotten-cls/train'), join(work, 'photos'), { recursive: true });
    await writeFile(join(work, 'colours.onnx'), buildYoloModel('v8'));
    await writeFile(join(work, 'red.png'), await squaresPng(128, 128, [{ x: 20, y: 30, width: 40, height: 30, colour: [255, 0, 0] }]));
    const pager = await t.user('pager@example.com');
    pagingToken = pager.token;
    pagingProject = (await pager.post('/api/projects', { name: 'many', project_type: 'object_detection' })).body.id;
    for (let i = 0; i < PAGED_IMAGES; i++) await insertImageRow(t, pagingProject);
    // The rows skip the upload path, so the project's image counter (the list's unfiltered total) is set here.
    await t.versa.deps.db.updateTable('projects').set({ image_count: PAGED_IMAGES }).where('id', '=', pagingProject).execute();
  });
  after(async () => {
    await t.close();
    await rm(work, { recursive: true, force: true });
  });

  it('uploads, annotates, pages, versions, downloads, trains (refused) and predicts', async () => {
    const config = {
      base, work,
      yolo_folder: join(work, 'vehicles'),
      photos_folder: join(work, 'photos'),
      paging_project: pagingProject,
      paging_token: pagingToken,
      model_path: join(work, 'colours.onnx'),
      red_image: join(work, 'red.png'),
    };
    const { stdout } = await run('python3', [JOURNEY, JSON.stringify(config)], { timeout: 8 * 60_000 });
    const seen = JSON.parse(stdout.trim().split('\n').pop()!);
    assert.equal(seen.me, 'journey@example.com');
    assert.deepEqual(seen.labelled_classes, ['Bicycle', 'Bus', 'Car', 'LCV', 'Three-wheeler', 'Truck', 'Two-wheelers']);
    // The fixture's SOURCE.md: 7 images, 3 of them with boxes, 17 boxes.
    assert.deepEqual(seen.labelled, { images: 7, annotated: 3, annotations: 17 });
    // The same folder again merges into the images it already has and duplicates no labels.
    assert.equal(seen.labelled_again_images, seen.labelled.images);
    assert.equal(seen.labelled_again_annotations, seen.labelled.annotations);
    assert.deepEqual(seen.plain, { created: 6, ticks: [[4, 6], [6, 6]], ids: 6 });
    assert.equal(seen.plain_again_duplicates, 6);
    assert.deepEqual(seen.classes, ['apple', 'banana', 'orange']);
    assert.equal(seen.annotations_first_image, 7);
    assert.equal(seen.annotations_total_header, 7);
    assert.equal(seen.updated_class_is_banana, true);
    assert.equal(seen.annotated_images, 6);
    // 7 created, one replaced, one deleted: read back three at a time.
    assert.deepEqual(seen.revisions_first_image, [...Array(7).fill('create'), 'delete', 'update']);
    assert.deepEqual(seen.paged, { count: PAGED_IMAGES, unique: PAGED_IMAGES, sorted: true, total: PAGED_IMAGES });
    assert.deepEqual(seen.version, { status: 'ready', number: 1, job: 'succeeded' });
    assert.equal(seen.version_images, 6);
    assert.deepEqual(seen.unpacked, { data_yaml: true, images: 6, zip_left: false });
    assert.equal(seen.coco_annotations, 6 + 5);
    assert.deepEqual(seen.wrong_model, [['body', 'model']]);
    assert.match(seen.train, /^refused (409|422)$/);
    assert.deepEqual(seen.models, ['colours']);
    assert.deepEqual(seen.predicted, [['bbox', 'suggested', 1]]);
    assert.equal(seen.missing, 404);
    assert.deepEqual(seen.bad_format_loc, ['body', 'format']);
  });
});
