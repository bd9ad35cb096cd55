import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { ppeImage, uploadImages, uploadPpeDetector } from '../helpers/ppe.js';

type User = Awaited<ReturnType<TestApp['user']>>;

describe('plugins', () => {
  let t: TestApp;
  let alice: User;
  let pluginsDir: string;

  before(async () => {
    pluginsDir = await mkdtemp(join(tmpdir(), 'versa-plugins-'));
    await copyFile(new URL('../../examples/plugins/crowded-images.mjs', import.meta.url), join(pluginsDir, 'crowded-images.mjs'));
    await writeFile(join(pluginsDir, 'broken.mjs'), 'export default { type: "pipeline_step", name: ');
    await writeFile(join(pluginsDir, 'no-version.mjs'), 'export default { type: "exporter", name: "parquet", schema: { type: "object" } };');
    await writeFile(join(pluginsDir, 'duplicate.mjs'), 'export default { type: "exporter", name: "coco", version: "1.0.0", schema: { type: "object" } };');
    await writeFile(join(pluginsDir, 'notes.txt'), 'not a module');
    t = await startTestApp({ PLUGINS_DIR: pluginsDir });
    alice = await t.user();
  });
  after(async () => {
    await t.close();
    await rm(pluginsDir, { recursive: true, force: true });
  });

  it('needs credentials', async () => {
    assert.equal((await t.client().get('/api/plugins')).status, 401);
    assert.equal((await t.client().get('/api/plugins/exporter/coco')).status, 401);
  });

  it("lists Versa's own catalogs, each plugin with a JSON Schema of its parameters", async () => {
    const res = await alice.get('/api/plugins');
    assert.equal(res.status, 200);
    const names = (type: string) => (res.body as { type: string; name: string; status: string }[]).filter((p) => p.type === type && p.status === 'loaded').map((p) => p.name);
    assert.deepEqual(names('importer').sort(), ['coco', 'createml', 'cvat', 'cvat_video', 'datumaro', 'dota', 'folders', 'image_sequence', 'images', 'jsonl', 'kitti', 'labelme', 'labelstudio', 'masks', 'mot', 'mpii', 'multilabel_csv', 'openimages', 'voc', 'voc_masks', 'vott', 'widerface', 'yolo']);
    assert.deepEqual(names('exporter').sort(), ['coco', 'coco_zip', 'createml', 'csv', 'cvat', 'cvat_video', 'datumaro', 'dota', 'folders', 'jsonl', 'labelme', 'labelstudio', 'masks', 'mot', 'multilabel_csv', 'voc', 'yolo', 'yolo_ultralytics']);
    assert.ok(names('preprocessing').includes('resize'));
    assert.ok(names('augmentation').length > 3);
    assert.deepEqual(names('detector').sort(), ['sam', 'yolo-detect', 'yolo-segment']);
    assert.ok(names('pipeline_step').includes('rule'));
    assert.ok(names('quality_check').includes('near_duplicates') && names('quality_check').includes('unannotated_images'));
    assert.ok(names('cleaning_action').includes('remove_exact_duplicates'));
    assert.deepEqual(names('training_adapter').sort(), ['tabular', 'ultralytics', 'versa-classify', 'versa-detect', 'versa-segment']);
    const near = (await alice.get('/api/plugins/quality_check/near_duplicates')).body;
    assert.equal(near.config_schema.properties.max_distance.type, 'integer');
    const detect = (await alice.get('/api/plugins/training_adapter/versa-detect')).body;
    assert.equal(detect.config_schema.properties.epochs.maximum, 1000);
    assert.deepEqual(detect.config_schema.properties.time_budget_s.type, ['integer', 'null']);
    for (const p of res.body) if (p.status === 'loaded') assert.equal(typeof p.config_schema, 'object', `${p.type}/${p.name}`);
    const resize = (await alice.get('/api/plugins/preprocessing/resize')).body;
    assert.equal(resize.builtin, true);
    assert.equal(resize.config_schema.properties.width.default, 640);
  });

  it('filters by plugin_type; unknown names are 404 and unknown types 422', async () => {
    const exporters = (await alice.get('/api/plugins?plugin_type=exporter')).body as { type: string }[];
    assert.ok(exporters.length >= 8);
    assert.ok(exporters.every((p) => p.type === 'exporter'));
    assert.equal((await alice.get('/api/plugins/exporter/parquet')).status, 404);
    assert.equal((await alice.get('/api/plugins/teleporter/coco')).status, 422);
    assert.equal((await alice.get('/api/plugins?plugin_type=teleporter')).status, 422);
  });

  it('loads the example plugin from PLUGINS_DIR and reports the ones that failed, without stopping the server', async () => {
    const plugin = await alice.get('/api/plugins/pipeline_step/crowded_images');
    assert.equal(plugin.status, 200);
    assert.equal(plugin.body.builtin, false);
    assert.equal(plugin.body.version, '1.0.0');
    assert.equal(plugin.body.source, 'crowded-images.mjs');
    const all = (await alice.get('/api/plugins')).body as { status: string; source: string | null; error: string | null; name: string }[];
    const failed = new Map(all.filter((p) => p.status === 'failed').map((p) => [p.source, p.error]));
    assert.deepEqual([...failed.keys()].sort(), ['broken.mjs', 'duplicate.mjs', 'no-version.mjs']);
    assert.match(failed.get('broken.mjs')!, /import failed/);
    assert.match(failed.get('no-version.mjs')!, /version/);
    assert.match(failed.get('duplicate.mjs')!, /already registered/);
    const steps = (await alice.get('/api/pipelines/step-types')).body as { type: string; builtin: boolean }[];
    assert.equal(steps.find((s) => s.type === 'crowded_images')?.builtin, false);
  });

  it("validates a plugin step's params with its schema and runs it in a pipeline", async () => {
    const steps = (params: object) => [
      { id: 'select', type: 'select_images' },
      { id: 'detect', type: 'detect', needs: ['select'] },
      { id: 'crowded', type: 'crowded_images', needs: ['detect'], params },
      { id: 'report', type: 'report', needs: ['crowded'] },
    ];
    const bad = await alice.post('/api/pipelines/validate', { name: 'x', steps: steps({ min_detections: 0 }) });
    assert.equal(bad.body.valid, false);
    assert.equal(bad.body.errors[0].path, 'steps[2].params.min_detections');

    const project = (await alice.post('/api/projects', { name: 'crowds' })).body.id as number;
    await uploadPpeDetector(alice, project);
    await uploadImages(alice, project, [await ppeImage(0, { helmet: true, vest: true }), await ppeImage(1, { helmet: false, vest: false })]);
    const pipeline = (await alice.post('/api/pipelines', { project_id: project, definition: { name: 'crowds', steps: steps({ min_detections: 3 }) } })).body;
    const started = await alice.post(`/api/pipelines/${pipeline.id}/run`, {});
    assert.equal(started.status, 202, JSON.stringify(started.body));
    await t.versa.deps.queue.drain();
    const run = (await alice.get(`/api/pipeline-runs/${started.body.id}`)).body;
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(run.outputs.crowded, { kept: 1, dropped: 1 });
    assert.equal(run.outputs.report.images, 1);
  });
});
