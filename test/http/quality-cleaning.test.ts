import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import sharp from 'sharp';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';
import { addBox, createClass, createProject, uploadImages } from '../helpers/version-fixtures.js';

const noiseRaw = (seed: number, width = 96, height = 64) => {
  const data = Buffer.alloc(width * height * 3);
  let s = seed * 2654435761;
  for (let i = 0; i < data.length; i++) data[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
  return sharp(data, { raw: { width, height, channels: 3 } });
};

/**
 * Cleaning over a small project: two encodings of one picture (exact duplicates), a tiny box, a box hanging over
 * the border, two same-class duplicates, an unannotated image. Each test starts from the same state (reverting).
 */
describe('cleaning: preview, apply, revert', () => {
  let t: TestApp;
  let owner: Client;
  let viewer: Client & { id: number };
  let annotator: Client & { id: number; email: string };
  let stranger: Client;
  let projectId: number;
  const img: Record<string, number> = {};
  const ann: Record<string, number> = {};
  let cat: number;
  let dog: number;

  const db = () => t.versa.deps.db;
  const state = async () => ({
    images: (await db().selectFrom('images').select(['id', 'split', 'review_state', 'annotation_count']).where('project_id', '=', projectId).orderBy('id').execute()),
    annotations: (await db().selectFrom('annotations').select(['id', 'class_id', 'geometry']).where('project_id', '=', projectId).orderBy('id').execute()),
    classes: (await db().selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).orderBy('id').execute()),
    project: await db().selectFrom('projects').select(['image_count', 'annotated_image_count', 'annotation_count', 'class_count']).where('id', '=', projectId).executeTakeFirstOrThrow(),
  });
  let initial: Awaited<ReturnType<typeof state>>;

  before(async () => {
    t = await startTestApp();
    owner = await t.user();
    viewer = await t.user();
    annotator = await t.user();
    stranger = await t.user();
    projectId = await createProject(owner, 'cleaning');
    await owner.post(`/api/projects/${projectId}/members`, { user_id: viewer.id, role: 'viewer' });
    await owner.post(`/api/projects/${projectId}/members`, { user_id: annotator.id, role: 'annotator' });
    const files = [
      { name: 'a.png', data: await noiseRaw(1).png({ compressionLevel: 9 }).toBuffer() },
      { name: 'a-copy.png', data: await noiseRaw(1).png({ compressionLevel: 1 }).toBuffer() },
      { name: 'b.png', data: await noiseRaw(2).png().toBuffer() },
      { name: 'empty.png', data: await noiseRaw(3).png().toBuffer() },
    ];
    const images = await uploadImages(owner, projectId, files);
    files.forEach((f, i) => (img[f.name] = images[i].id));
    cat = await createClass(owner, projectId, 'cat');
    dog = await createClass(owner, projectId, 'dog');
    ann.tiny = (await addBox(owner, img['b.png'], cat, { x: 5, y: 5, width: 1, height: 1 })).id;
    ann.kept = (await addBox(owner, img['b.png'], cat, { x: 20, y: 20, width: 30, height: 20 })).id;
    ann.dup = (await addBox(owner, img['b.png'], cat, { x: 20, y: 20, width: 30, height: 21 })).id;
    ann.copyBox = (await addBox(owner, img['a-copy.png'], dog, { x: 10, y: 10, width: 20, height: 20 })).id;
    ann.edge = (await addBox(owner, img['a.png'], dog, { x: 80, y: 40, width: 16, height: 24 })).id;
    // A box hanging over the border, as an import may leave it (the API clamps what it is sent).
    await db().updateTable('annotations').set({ geometry: JSON.stringify({ x: 80, y: 40, width: 30, height: 40 }) }).where('id', '=', ann.edge).execute();
    initial = await state();
  });
  after(() => t.close());

  const preview = (actions: unknown, client: Client = owner) => client.post(`/api/projects/${projectId}/cleaning/preview`, { actions });
  const apply = (body: unknown, client: Client = owner) => client.post(`/api/projects/${projectId}/cleaning`, body);

  /** Every test starts from the initial project: the last applied run is reverted. */
  beforeEach(async () => {
    const runs = (await owner.get(`/api/projects/${projectId}/cleaning/runs`)).body;
    for (const run of runs) if (run.status === 'applied') assert.equal((await owner.post(`/api/cleaning-runs/${run.id}/revert`)).status, 200);
  });

  it('lists the cleaning catalog', async () => {
    const res = await owner.get('/api/cleaning/actions?modality=image');
    assert.equal(res.status, 200);
    const ids = res.body.map((a: any) => a.id);
    for (const id of ['remove_exact_duplicates', 'remove_near_duplicates', 'fix_split_leakage', 'drop_tiny_annotations', 'merge_duplicate_boxes', 'clip_annotations', 'remove_unannotated_images', 'merge_classes', 'rename_class', 'delete_unreadable_images']) {
      assert.ok(ids.includes(id), id);
    }
    assert.deepEqual((await owner.get('/api/cleaning/actions?modality=tabular')).body, []);
    assert.equal((await t.client().get('/api/cleaning/actions')).status, 401);
  });

  it('previews exactly what would change, and changes nothing', async () => {
    const res = await preview([{ id: 'remove_exact_duplicates' }, { id: 'drop_tiny_annotations' }, { id: 'merge_duplicate_boxes' }, { id: 'clip_annotations' }, { id: 'remove_unannotated_images' }]);
    assert.equal(res.status, 200);
    assert.match(res.body.preview_token, /^[0-9a-f]{64}$/);
    const changes = res.body.changes.map((c: any) => [c.action, c.kind, c.image_id, c.annotation_id ?? null]);
    assert.deepEqual(changes, [
      // Both copies carry one annotation: the older one is kept.
      ['remove_exact_duplicates', 'delete_image', img['a-copy.png'], null],
      ['drop_tiny_annotations', 'delete_annotation', img['b.png'], ann.tiny],
      ['merge_duplicate_boxes', 'delete_annotation', img['b.png'], ann.dup],
      ['clip_annotations', 'update_annotation', img['a.png'], ann.edge],
      ['remove_unannotated_images', 'mark_image', img['empty.png'], null],
    ]);
    assert.deepEqual(res.body.summary, { delete_image: 1, delete_annotation: 2, update_annotation: 1, mark_image: 1 });
    assert.deepEqual(await state(), initial);
  });

  it('applies what the preview showed in one run with revisions, and reverts it as a whole', async () => {
    const actions = [{ id: 'drop_tiny_annotations' }, { id: 'clip_annotations' }, { id: 'remove_exact_duplicates' }, { id: 'merge_classes', params: { from: [dog], into: cat } }];
    const shown = await preview(actions);
    const res = await apply({ actions, preview_token: shown.body.preview_token });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.summary, shown.body.summary);
    assert.deepEqual(res.body.summary, { delete_annotation: 1, delete_image: 1, update_annotation: 1, delete_class: 1 });
    const after = await state();
    assert.deepEqual(after.images.map((i) => i.id), [img['a.png'], img['b.png'], img['empty.png']]);
    assert.deepEqual(after.classes.map((c) => c.name), ['cat']);
    assert.ok(after.annotations.every((a) => a.class_id === cat));
    assert.ok(!after.annotations.some((a) => a.id === ann.tiny));
    assert.deepEqual(after.project, { image_count: 3, annotated_image_count: 2, annotation_count: 3, class_count: 1 });
    assert.deepEqual(after.images.map((i) => i.annotation_count), [1, 2, 0]);
    const revisions = await db().selectFrom('revisions').select(['annotation_id', 'action']).where('project_id', '=', projectId).where('action', '!=', 'create').execute();
    assert.deepEqual(revisions.map((r) => [r.annotation_id, r.action]).sort(), [[ann.edge, 'update'], [ann.tiny, 'delete']].sort());
    // The deleted image's file stays while the run can be reverted.
    assert.deepEqual(JSON.parse(after.annotations.find((a) => a.id === ann.edge)!.geometry), { x: 80, y: 40, width: 16, height: 24 });

    const runs = (await owner.get(`/api/projects/${projectId}/cleaning/runs`)).body;
    assert.equal(runs[0].id, res.body.cleaning_run_id);
    assert.equal(runs[0].status, 'applied');
    const reverted = await owner.post(`/api/cleaning-runs/${res.body.cleaning_run_id}/revert`);
    assert.equal(reverted.status, 200);
    assert.equal(reverted.body.status, 'reverted');
    const back = await state();
    assert.deepEqual(back.images, initial.images);
    assert.deepEqual(back.classes, initial.classes);
    assert.deepEqual(back.project, initial.project);
    assert.deepEqual(back.annotations.map((a) => [a.id, a.class_id, JSON.parse(a.geometry)]), initial.annotations.map((a) => [a.id, a.class_id, JSON.parse(a.geometry)]));
    // The deleted image's files were kept while the run could be reverted.
    const file = await owner.get(`/api/images/${img['a-copy.png']}/thumbnail`);
    assert.equal(file.status, 200);
    assert.equal((await owner.post(`/api/cleaning-runs/${res.body.cleaning_run_id}/revert`)).status, 409);
  });

  it('clips boxes to the image', async () => {
    const res = await preview([{ id: 'clip_annotations' }]);
    assert.deepEqual(res.body.changes.map((c: any) => [c.kind, c.annotation_id]), [['update_annotation', ann.edge]]);
    await apply({ actions: [{ id: 'clip_annotations' }], preview_token: res.body.preview_token });
    const row = await db().selectFrom('annotations').select('geometry').where('id', '=', ann.edge).executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.geometry), { x: 80, y: 40, width: 16, height: 24 });
  });

  it('refuses a preview made before the project changed (409), and applies nothing', async () => {
    const shown = await preview([{ id: 'drop_tiny_annotations' }]);
    const patched = await owner.put(`/api/annotations/${ann.tiny}`, { class_id: dog, annotation_type: 'bbox', geometry: { x: 5, y: 5, width: 1, height: 2 } });
    assert.equal(patched.status, 200);
    const res = await apply({ actions: [{ id: 'drop_tiny_annotations' }], preview_token: shown.body.preview_token });
    assert.equal(res.status, 409);
    assert.ok((await state()).annotations.some((a) => a.id === ann.tiny));
    await owner.put(`/api/annotations/${ann.tiny}`, { class_id: cat, annotation_type: 'bbox', geometry: { x: 5, y: 5, width: 1, height: 1 } });
    initial = await state();
  });

  it("respects another user's lock (409 naming the holder) and changes nothing", async () => {
    const lock = await annotator.post(`/api/images/${img['b.png']}/lock`);
    assert.equal(lock.status, 200);
    const res = await apply({ actions: [{ id: 'drop_tiny_annotations' }] });
    assert.equal(res.status, 409);
    assert.match(res.body.detail, new RegExp(annotator.email));
    assert.deepEqual(res.body.locks.map((l: any) => l.image_id), [img['b.png']]);
    assert.deepEqual(await state(), initial);
    await annotator.delete(`/api/images/${img['b.png']}/lock`);
  });

  it('a run that fails half-way changes nothing', async () => {
    // The rename collides with an existing name only when the database is written, after the tiny box is gone.
    const res = await apply({ actions: [{ id: 'drop_tiny_annotations' }, { id: 'rename_class', params: { class_id: dog, name: 'cat' } }] });
    assert.equal(res.status, 409);
    assert.deepEqual(await state(), initial);
    assert.equal((await db().selectFrom('cleaning_runs').select('id').where('status', '=', 'applied').execute()).length, 0);
  });

  it('bad input is 422 naming the valid ids; viewers may not clean; strangers see nothing', async () => {
    const unknown = await preview([{ id: 'drop_tiny_annotations' }, { id: 'burn_it_all' }]);
    assert.equal(unknown.status, 422);
    assert.deepEqual(unknown.body.detail[0].loc, ['body', 'actions', 1]);
    assert.match(unknown.body.detail[0].msg, /valid: .*drop_tiny_annotations/);
    const range = await apply({ actions: [{ id: 'merge_duplicate_boxes', params: { min_iou: 2 } }] });
    assert.equal(range.status, 422);
    assert.deepEqual(range.body.detail[0].loc, ['body', 'actions', 0, 'params', 'min_iou']);
    const foreignClass = await preview([{ id: 'merge_classes', params: { from: [999999], into: cat } }]);
    assert.equal(foreignClass.status, 422);
    assert.equal((await preview([], owner)).status, 422);
    assert.equal((await preview([{ id: 'drop_tiny_annotations' }], viewer)).status, 403);
    assert.equal((await apply({ actions: [{ id: 'drop_tiny_annotations' }] }, viewer)).status, 403);
    assert.equal((await viewer.get(`/api/projects/${projectId}/cleaning/runs`)).status, 200);
    assert.equal((await preview([{ id: 'drop_tiny_annotations' }], stranger)).status, 404);
    assert.equal((await apply({ actions: [{ id: 'drop_tiny_annotations' }] }, stranger)).status, 404);
    assert.equal((await stranger.get(`/api/projects/${projectId}/cleaning/runs`)).status, 404);
    assert.equal((await t.client().post(`/api/projects/${projectId}/cleaning`, { actions: [{ id: 'drop_tiny_annotations' }] })).status, 401);
    assert.deepEqual(await state(), initial);

    const run = await apply({ actions: [{ id: 'drop_tiny_annotations' }] });
    assert.equal((await stranger.post(`/api/cleaning-runs/${run.body.cleaning_run_id}/revert`)).status, 404);
    assert.equal((await viewer.post(`/api/cleaning-runs/${run.body.cleaning_run_id}/revert`)).status, 403);
    assert.equal((await owner.post('/api/cleaning-runs/999999/revert')).status, 404);
  });
});
