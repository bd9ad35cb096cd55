import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildClassifierModel } from '../helpers/onnx/classifier-model.js';
import { squaresPng } from '../helpers/onnx/test-images.js';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { buildZip, type ZipEntry } from '../helpers/zip-build.js';

const RED = [255, 0, 0] as [number, number, number];
const BLUE = [0, 0, 255] as [number, number, number];
const picture = (colour: [number, number, number], size = 32) => squaresPng(size, size, [{ x: 0, y: 0, width: size, height: size, colour }]);

/**
 * Issue 30: a single-label classification project holds one class per image whatever writes it: the annotation
 * routes (create, replace, revert), model output (auto-annotate) and imports into the project. A second class is a
 * 409 with `detail` from the API; model output and imports leave it out and say so.
 */
describe('single-label: every write path keeps one class per image', () => {
  let t: TestApp;
  let owner: Client;
  before(async () => {
    t = await startTestApp();
    owner = await t.user();
  });
  after(() => t.close());

  const project = async (multi = false) => {
    const res = await owner.post('/api/projects', { name: 'pets', project_type: 'classification', multi_label: multi });
    assert.equal(res.status, 201);
    const id = res.body.id as number;
    const cls = async (name: string) => (await owner.post(`/api/projects/${id}/classes`, { name })).body.id as number;
    return { id, cat: await cls('cat'), dog: await cls('dog') };
  };
  const upload = async (projectId: number, data: Buffer, filename = 'a.png') => {
    const res = await owner.request({ method: 'POST', url: `/api/projects/${projectId}/images`, ...multipart([{ name: 'files', filename, data, contentType: 'image/png' }]) });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.images[0].id as number;
  };
  const label = (imageId: number, classId: number, extra: object = {}) =>
    owner.post(`/api/images/${imageId}/annotations`, { class_id: classId, annotation_type: 'classification', geometry: {}, ...extra });
  const classesOf = async (imageId: number) => ((await owner.get(`/api/images/${imageId}/annotations`)).body as { class_id: number; annotation_type: string }[])
    .filter((a) => a.annotation_type === 'classification').map((a) => a.class_id);

  it('a second class on an image is 409 with detail and changes nothing; PUT changes the class; multi-label keeps both', async () => {
    const p = await project();
    const imageId = await upload(p.id, await picture(RED));
    const first = await label(imageId, p.cat);
    assert.equal(first.status, 201);
    const second = await label(imageId, p.dog);
    assert.equal(second.status, 409, JSON.stringify(second.body));
    assert.match(second.body.detail, /single-label.*already has the class "cat".*PUT \/api\/annotations\/\d+/);
    assert.equal(second.body.annotation_id, first.body.id);
    // A suggestion is the image's class too until someone decides on it.
    assert.equal((await label(imageId, p.dog, { status: 'suggested', source: 'model:1', confidence: 0.5 })).status, 409);
    assert.deepEqual(await classesOf(imageId), [p.cat]);
    assert.equal((await owner.get(`/api/projects/${p.id}`)).body.annotation_count, 1);

    const changed = await owner.put(`/api/annotations/${first.body.id}`, { class_id: p.dog, annotation_type: 'classification', geometry: {} });
    assert.equal(changed.status, 200);
    assert.deepEqual(await classesOf(imageId), [p.dog]);

    const multi = await project(true);
    const tagged = await upload(multi.id, await picture(RED));
    assert.equal((await label(tagged, multi.cat)).status, 201);
    assert.equal((await label(tagged, multi.dog)).status, 201);
    assert.deepEqual((await classesOf(tagged)).sort(), [multi.cat, multi.dog].sort());
    // Back to single-label while an image holds two classes: refused, nothing changed.
    const back = await owner.patch(`/api/projects/${multi.id}`, { multi_label: false });
    assert.equal(back.status, 409);
    assert.match(back.body.detail, /1 image\(s\) of project \d+ hold more than one class/);
    assert.equal((await owner.get(`/api/projects/${multi.id}`)).body.multi_label, true);
  });

  it('of concurrent requests giving one image a class, exactly one is written; the others are 409', async () => {
    const p = await project();
    const imageId = await upload(p.id, await picture(RED));
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => label(imageId, i % 2 ? p.dog : p.cat)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    assert.equal((await classesOf(imageId)).length, 1);
    assert.equal((await owner.get(`/api/projects/${p.id}`)).body.annotation_count, 1);
  });

  it('a box turned into a second class by PUT, and a reverted delete that would bring a second class back, are 409', async () => {
    const p = await project();
    const imageId = await upload(p.id, await picture(RED));
    const box = await owner.post(`/api/images/${imageId}/annotations`, { class_id: p.dog, annotation_type: 'bbox', geometry: { x: 1, y: 1, width: 5, height: 5 } });
    assert.equal(box.status, 201);
    const cat = await label(imageId, p.cat);
    const turned = await owner.put(`/api/annotations/${box.body.id}`, { class_id: p.dog, annotation_type: 'classification', geometry: {} });
    assert.equal(turned.status, 409);

    assert.equal((await owner.delete(`/api/annotations/${cat.body.id}`)).status, 204);
    assert.equal((await label(imageId, p.dog)).status, 201);
    const history = (await owner.get(`/api/annotations/${cat.body.id}/revisions`)).body as { id: number; action: string }[];
    const created = history.find((r) => r.action === 'create')!;
    const revert = await owner.post(`/api/annotations/${cat.body.id}/revert`, { revision_id: created.id });
    assert.equal(revert.status, 409, JSON.stringify(revert.body));
    assert.match(revert.body.detail, /already has the class "dog"/);
    assert.deepEqual(await classesOf(imageId), [p.dog]);
  });

  it('a classifier suggests a class only for images without one, and counts the others as skipped', async () => {
    const p = await project();
    const model = await owner.request({ method: 'POST', url: `/api/projects/${p.id}/models/upload`, ...multipart([{ name: 'file', filename: 'classify.onnx', data: Buffer.from(buildClassifierModel()) }]) });
    assert.equal(model.status, 201, JSON.stringify(model.body));
    assert.equal(model.body.task, 'classify');
    const labelled = await upload(p.id, await picture(RED), 'red.png');
    const open = await upload(p.id, await picture(BLUE), 'blue.png');
    assert.equal((await label(labelled, p.cat)).status, 201);
    const run = await owner.post(`/api/projects/${p.id}/auto-annotate/yolo`, { model: model.body.id, confidence: 0.25, create_missing_classes: true });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(run.body.created, 1);
    assert.equal(run.body.skipped, 1);
    assert.deepEqual(await classesOf(labelled), [p.cat]);
    assert.equal((await classesOf(open)).length, 1);
    // Run again: the model's own suggestion is replaced, not joined by a second.
    const again = await owner.post(`/api/projects/${p.id}/auto-annotate/yolo`, { model: model.body.id, confidence: 0.25 });
    assert.equal(again.status, 200);
    assert.equal(again.body.replaced, 1);
    assert.equal((await classesOf(open)).length, 1);
  });

  it('a reviewer\'s consensus decision changes the image\'s class in place; a decision giving two classes is 409', async () => {
    const p = await project();
    const imageId = await upload(p.id, await picture(RED));
    const cat = await label(imageId, p.cat);
    const cls = (class_id: number) => ({ class_id, annotation_type: 'classification', geometry: {} });
    const two = await owner.post(`/api/projects/${p.id}/quality-control/consensus`, { image_id: imageId, method: 'edit', shapes: [cls(p.dog), cls(p.cat)] });
    assert.equal(two.status, 409, JSON.stringify(two.body));
    assert.match(two.body.detail, /single-label and the decision gives image \d+ 2 classes/);
    const decided = await owner.post(`/api/projects/${p.id}/quality-control/consensus`, { image_id: imageId, method: 'edit', shapes: [cls(p.dog)] });
    assert.equal(decided.status, 201, JSON.stringify(decided.body));
    const now = (await owner.get(`/api/images/${imageId}/annotations`)).body as { id: number; class_id: number }[];
    assert.deepEqual(now.map((a) => [a.id, a.class_id]), [[cat.body.id, p.dog]]);
  });

  const multiLabelCsv = async (rows: string, images: Record<string, Buffer>): Promise<Buffer> => {
    const entries: ZipEntry[] = [{ name: 'train/_classes.csv', data: `filename, cat, dog\n${rows}` }];
    for (const [name, data] of Object.entries(images)) entries.push({ name: `train/${name}`, data });
    return buildZip(entries);
  };
  const importZip = (url: string, zip: Buffer, fields: Record<string, string> = {}) =>
    owner.request({ method: 'POST', url, ...multipart([{ name: 'file', filename: 'labels.zip', data: zip, contentType: 'application/zip' }], fields) });

  it('an import into the project keeps the first class of an entry and none for an image that has one, each left out with its reason', async () => {
    const p = await project();
    const known = await picture(RED, 20);
    const knownId = await upload(p.id, known, 'known.png');
    assert.equal((await label(knownId, p.cat)).status, 201);
    const zip = await multiLabelCsv('both.png,1,1\nknown.png,0,1\n', { 'both.png': await picture(BLUE, 24), 'known.png': known });
    const res = await importZip(`/api/projects/${p.id}/import`, zip, { format: 'multilabel_csv' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.annotations_created, 1);
    assert.deepEqual(res.body.counts.kept.annotations, { classification: 1 });
    assert.deepEqual(res.body.counts.skipped.annotations, { classification: 2 });
    assert.deepEqual(res.body.skipped.map((s: { file: string; reason: string }) => [s.file, s.reason]).sort(), [
      ['both.png', `project ${p.id} is single-label; the entry's first class "cat" was kept`],
      ['known.png', `project ${p.id} is single-label and the image already has class "cat"`],
    ]);
    assert.deepEqual(await classesOf(knownId), [p.cat]);
    const images = (await owner.get(`/api/projects/${p.id}/images`)).body as { id: number; original_name: string; annotation_count: number }[];
    const both = images.find((i) => i.original_name === 'both.png')!;
    assert.deepEqual(await classesOf(both.id), [p.cat]);
    assert.equal(both.annotation_count, 1);
    assert.equal((await owner.get(`/api/projects/${p.id}`)).body.annotation_count, 2);

    // strict: the import would leave classes out, so nothing is imported.
    const strict = await importZip(`/api/projects/${p.id}/import`, await multiLabelCsv('other.png,1,1\n', { 'other.png': await picture(BLUE, 28) }), { format: 'multilabel_csv', strict: 'true' });
    assert.equal(strict.status, 422, JSON.stringify(strict.body));
    assert.equal((await owner.get(`/api/projects/${p.id}`)).body.image_count, 2);
  });

  it('a dataset imported as a new project where an image holds two classes makes a multi-label project', async () => {
    const zip = await multiLabelCsv('both.png,1,1\none.png,1,0\n', { 'both.png': await picture(BLUE, 24), 'one.png': await picture(RED, 24) });
    const res = await importZip('/api/projects/import', zip, { project_type: 'classification', format: 'multilabel_csv' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.multi_label, true);
    assert.equal(res.body.annotation_count, 3);
    const single = await importZip('/api/projects/import', await multiLabelCsv('one.png,1,0\n', { 'one.png': await picture(RED, 24) }), { project_type: 'classification', format: 'multilabel_csv' });
    assert.equal(single.body.multi_label, false);
  });
});
