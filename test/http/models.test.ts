import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { multipart } from '../helpers/multipart.js';
import { buildSamDecoder, buildSamEncoder, buildSamEncoderHwc } from '../helpers/onnx/sam-models.js';
import { buildYoloModel, TEST_CLASSES } from '../helpers/onnx/yolo-models.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('model registry', () => {
  let t: TestApp;
  let alice: User;
  let mallory: User;
  let modelsRoot: string;
  let runsRoot: string;
  let outside: string;
  const v8 = Buffer.from(buildYoloModel('v8'));
  const v5 = Buffer.from(buildYoloModel('v5'));

  before(async () => {
    modelsRoot = await mkdtemp(join(tmpdir(), 'versa-models-'));
    runsRoot = await mkdtemp(join(tmpdir(), 'versa-runs-'));
    outside = await mkdtemp(join(tmpdir(), 'versa-outside-'));
    await writeFile(join(modelsRoot, 'det.onnx'), v8);
    await writeFile(join(modelsRoot, 'weights.pt'), Buffer.from('PK\u0003\u0004 pickled torch weights, never opened'));
    await writeFile(join(outside, 'secret.onnx'), v5);
    await symlink(join(outside, 'secret.onnx'), join(modelsRoot, 'escape.onnx'));
    const weights = join(runsRoot, 'runs', 'detect', 'train3', 'weights');
    await mkdir(weights, { recursive: true });
    await writeFile(join(weights, 'best.pt'), Buffer.from('pt bytes'));
    await writeFile(join(weights, 'last.onnx'), v5);
    await writeFile(join(weights, 'notes.txt'), 'not weights');
    t = await startTestApp({ MODELS_ROOT: modelsRoot, RUNS_ROOT: runsRoot, MAX_MODEL_UPLOAD_MB: '1' });
    await t.user(); // the first account is instance admin and sees everything; keep it out of the way
    alice = await t.user();
    mallory = await t.user();
  });
  after(async () => {
    await t.close();
    for (const dir of [modelsRoot, runsRoot, outside]) await rm(dir, { recursive: true, force: true });
  });

  const project = async (owner: User = alice) => (await owner.post('/api/projects', { name: 'p' })).body.id as number;
  const upload = (user: User, projectId: number, data: Buffer, filename = 'detector.onnx', fields: Record<string, string> = {}) =>
    user.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename, data }], fields) });
  const modelRows = async () => Number((await t.versa.deps.db.selectFrom('models').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const blobFiles = async (projectId: number) => readdir(join(t.dataDir, 'blobs', 'projects', String(projectId), 'models')).catch(() => []);
  const spooled = async () => readdir(join(t.dataDir, 'tmp', 'model-uploads')).catch(() => []);

  it('uploads an ONNX detector and reads its task, input size and class names from the model', async () => {
    const projectId = await project();
    const res = await upload(alice, projectId, v8);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const m = res.body;
    assert.equal(m.project_id, projectId);
    assert.equal(m.name, 'detector');
    assert.equal(m.format, 'onnx');
    assert.equal(m.task, 'detect');
    assert.deepEqual(m.input_size, { width: 128, height: 128 });
    assert.deepEqual(m.class_names, TEST_CLASSES);
    assert.equal(m.size_bytes, v8.length);
    assert.equal(m.sha256, sha256(v8));
    assert.equal(m.lifecycle, 'development');
    assert.equal(m.source, 'upload');
    assert.equal(m.path, null);
    assert.match(m.blob, new RegExp(`^projects/${projectId}/models/${sha256(v8)}-[0-9a-f]{12}\\.onnx$`));
    assert.equal(m.created_by, alice.id);
    assert.equal(m.lifecycle_history.length, 1);
    assert.equal(m.lifecycle_history[0].to, 'development');
    assert.equal(m.lifecycle_history[0].changed_by, alice.id);
    const files = await blobFiles(projectId);
    assert.equal(files.length, 1);
    assert.match(files[0], new RegExp(`^${sha256(v8)}-[0-9a-f]{12}\\.onnx$`));
    assert.deepEqual(await spooled(), []);

    const listed = await alice.get(`/api/projects/${projectId}/models`);
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body, [m]);
    assert.deepEqual((await alice.get(`/api/models?project_id=${projectId}`)).body, [m]);
    assert.ok((await alice.get('/api/models')).body.some((x: { id: number }) => x.id === m.id));
    assert.deepEqual((await mallory.get('/api/models')).body, []);
    assert.equal((await mallory.get(`/api/models?project_id=${projectId}`)).status, 404);
    assert.equal((await mallory.get(`/api/projects/${projectId}/models`)).status, 404);
  });

  it('takes name, task and class names from the upload fields, and answers a repeat with 409', async () => {
    const projectId = await project();
    const res = await upload(alice, projectId, v5, 'yolov5.onnx', { name: 'Fruit v5', class_names: '["apple", "pear"]' });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, 'Fruit v5');
    assert.deepEqual(res.body.class_names, ['apple', 'pear']);
    const sameFile = await upload(alice, projectId, v5, 'again.onnx');
    assert.equal(sameFile.status, 409);
    assert.equal(sameFile.body.model_id, res.body.id);
    const sameName = await upload(alice, projectId, v8, 'x.onnx', { name: 'Fruit v5' });
    assert.equal(sameName.status, 409);
    const comma = await upload(alice, projectId, v8, 'x.onnx', { class_names: 'a, b', task: 'segment' });
    assert.equal(comma.status, 201);
    assert.deepEqual(comma.body.class_names, ['a', 'b']);
    assert.equal(comma.body.task, 'segment');
    assert.equal((await blobFiles(projectId)).length, 2);
  });

  it('recognises SAM encoder and decoder exports by their interface', async () => {
    const projectId = await project();
    const encoder = await upload(alice, projectId, Buffer.from(buildSamEncoder(256)), 'sam_encoder.onnx');
    const decoder = await upload(alice, projectId, Buffer.from(buildSamDecoder(256)), 'sam_decoder.onnx');
    assert.equal(encoder.body.task, 'sam-encoder');
    assert.deepEqual(encoder.body.input_size, { width: 256, height: 256 });
    assert.equal(decoder.body.task, 'sam-decoder');
    assert.equal(decoder.body.input_size, null);
  });

  it('reads the input size of [1, H, W, 3] encoders (pre-processing inside) and of end-to-end segmentation exports', async () => {
    const projectId = await project();
    const fixed = await upload(alice, projectId, Buffer.from(buildSamEncoderHwc(512, { fixed: true, batch: true })), 'hwc_fixed.onnx');
    assert.equal(fixed.body.task, 'sam-encoder');
    assert.deepEqual(fixed.body.input_size, { width: 512, height: 512 });
    const free = await upload(alice, projectId, Buffer.from(buildSamEncoderHwc(512)), 'hwc_free.onnx');
    assert.equal(free.body.task, 'sam-encoder');
    assert.equal(free.body.input_size, null);
    const segment = await upload(alice, projectId, Buffer.from(buildYoloModel('end2end-seg')), 'yolo26-seg.onnx');
    assert.equal(segment.body.task, 'segment');
    assert.deepEqual(segment.body.input_size, { width: 128, height: 128 });
  });

  it('stores .pt weights without opening them', async () => {
    const projectId = await project();
    const pt = Buffer.from('\u0080\u0002 a pickle that must never be loaded');
    const res = await upload(alice, projectId, pt, 'best.pt', { class_names: 'cat,dog' });
    assert.equal(res.status, 201);
    assert.equal(res.body.format, 'pt');
    assert.equal(res.body.task, 'detect');
    assert.equal(res.body.input_size, null);
    assert.deepEqual(res.body.class_names, ['cat', 'dog']);
    assert.match(res.body.blob, new RegExp(`^projects/${projectId}/models/${sha256(pt)}-[0-9a-f]{12}\\.pt$`));
  });

  it('refuses bad uploads and leaves no rows, blobs or spooled files', async () => {
    const projectId = await project();
    const before = await modelRows();
    const junk = await upload(alice, projectId, Buffer.from('not an onnx model at all'), 'broken.onnx');
    assert.equal(junk.status, 422);
    assert.match(junk.body.detail, /broken\.onnx is not a usable ONNX model/);
    const noFile = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([], { name: 'x' }) });
    assert.equal(noFile.status, 422);
    assert.deepEqual(noFile.body.detail[0].loc, ['body', 'file']);
    const wrongPart = await alice.request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'files', filename: 'a.onnx', data: v8 }]) });
    assert.equal(wrongPart.status, 422);
    const json = await alice.post(`/api/projects/${projectId}/models/upload`, { file: 'x' });
    assert.equal(json.status, 422);
    const badTask = await upload(alice, projectId, v8, 'a.onnx', { task: 'dance' });
    assert.equal(badTask.status, 422);
    assert.deepEqual(badTask.body.detail[0].loc, ['body', 'task']);
    const badNames = await upload(alice, projectId, v8, 'a.onnx', { class_names: '["ok", 3]' });
    assert.equal(badNames.status, 422);
    const tooLarge = await upload(alice, projectId, Buffer.alloc(1024 * 1024 + 10, 1), 'huge.onnx');
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.body.detail, 'The model file is larger than the 1 MiB limit (MAX_MODEL_UPLOAD_MB)');
    assert.equal((await upload(mallory, projectId, v8)).status, 404);
    assert.equal((await upload(alice, 999_999, v8)).status, 404);
    const anonymous = await t.client().request({ method: 'POST', url: `/api/projects/${projectId}/models/upload`, ...multipart([{ name: 'file', filename: 'a.onnx', data: v8 }]) });
    assert.equal(anonymous.status, 401);
    assert.equal(await modelRows(), before);
    assert.deepEqual(await blobFiles(projectId), []);
    assert.deepEqual(await spooled(), []);
  });

  it('registers a file under MODELS_ROOT by relative or absolute path', async () => {
    const projectId = await project();
    const res = await alice.post(`/api/projects/${projectId}/models`, { path: 'det.onnx' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.source, 'path');
    assert.equal(res.body.name, 'det');
    assert.equal(res.body.blob, null);
    assert.match(res.body.path, /det\.onnx$/);
    assert.deepEqual(res.body.class_names, TEST_CLASSES);
    assert.equal(res.body.sha256, sha256(v8));
    const pt = await alice.post(`/api/projects/${projectId}/models`, { path: join(modelsRoot, 'weights.pt'), name: 'torch', task: 'segment' });
    assert.equal(pt.status, 201);
    assert.equal(pt.body.format, 'pt');
    assert.equal(pt.body.task, 'segment');
    assert.deepEqual(await blobFiles(projectId), []);
  });

  it('refuses paths outside MODELS_ROOT with 403, symlinks included, and bad bodies with 422', async () => {
    const projectId = await project();
    const before = await modelRows();
    for (const path of ['../outside.onnx', '/etc/passwd', join(outside, 'secret.onnx'), 'escape.onnx']) {
      const res = await alice.post(`/api/projects/${projectId}/models`, { path });
      assert.equal(res.status, 403, `${path}: ${JSON.stringify(res.body)}`);
    }
    assert.equal((await alice.post(`/api/projects/${projectId}/models`, { path: 'missing.onnx' })).status, 422);
    assert.equal((await alice.post(`/api/projects/${projectId}/models`, { path: '.' })).status, 422);
    assert.equal((await alice.post(`/api/projects/${projectId}/models`, {})).status, 422);
    assert.equal((await alice.post(`/api/projects/${projectId}/models`, { path: 'det.onnx', run_weights: 'x' })).status, 422);
    assert.equal((await alice.post(`/api/projects/${projectId}/models`, { path: 'det.onnx', task: 'dance' })).status, 422);
    assert.equal((await mallory.post(`/api/projects/${projectId}/models`, { path: 'det.onnx' })).status, 404);
    assert.equal((await t.client().post(`/api/projects/${projectId}/models`, { path: 'det.onnx' })).status, 401);
    assert.equal(await modelRows(), before);
  });

  it('discovers training run weights under RUNS_ROOT and registers them', async () => {
    const runs = await alice.get('/api/models/runs');
    assert.equal(runs.status, 200);
    assert.deepEqual(runs.body.map((r: { path: string }) => r.path), ['runs/detect/train3/weights/best.pt', 'runs/detect/train3/weights/last.onnx']);
    assert.deepEqual({ ...runs.body[1], modified_at: undefined }, {
      path: 'runs/detect/train3/weights/last.onnx', task: 'detect', run: 'train3', file: 'last.onnx', format: 'onnx', size_bytes: v5.length, modified_at: undefined,
      source: 'runs_root', metrics: null, // no results.csv in this run folder
    });
    const projectId = await project();
    const res = await alice.post(`/api/projects/${projectId}/models`, { run_weights: runs.body[1].path });
    assert.equal(res.status, 201);
    assert.equal(res.body.source, 'training_run');
    assert.equal(res.body.name, 'train3-last');
    assert.equal((await alice.post(`/api/projects/${projectId}/models`, { run_weights: '../../etc/passwd' })).status, 403);
    assert.equal((await t.client().get('/api/models/runs')).status, 401);
  });

  it('answers 403 when MODELS_ROOT and RUNS_ROOT are not set', async () => {
    const bare = await startTestApp();
    try {
      const bob = await bare.user();
      const projectId = (await bob.post('/api/projects', { name: 'p' })).body.id;
      const res = await bob.post(`/api/projects/${projectId}/models`, { path: join(modelsRoot, 'det.onnx') });
      assert.equal(res.status, 403);
      assert.match(res.body.detail, /MODELS_ROOT/);
      assert.equal((await bob.post(`/api/projects/${projectId}/models`, { run_weights: 'runs/detect/train3/weights/last.onnx' })).status, 403);
      assert.equal((await bob.get('/api/models/runs')).status, 403);
    } finally {
      await bare.close();
    }
  });

  it('keeps one production model per project and task, archiving the previous, with who and when', async () => {
    const projectId = await project();
    const a = (await upload(alice, projectId, v8, 'a.onnx')).body;
    const b = (await upload(alice, projectId, v5, 'b.onnx')).body;
    const promotedA = await alice.patch(`/api/models/${a.id}/lifecycle`, { lifecycle: 'production' });
    assert.equal(promotedA.status, 200);
    assert.equal(promotedA.body.lifecycle, 'production');
    const promotedB = await alice.patch(`/api/models/${b.id}/lifecycle`, { lifecycle: 'production' });
    assert.equal(promotedB.body.lifecycle, 'production');
    const models = (await alice.get(`/api/projects/${projectId}/models`)).body as { id: number; lifecycle: string; lifecycle_history: any[] }[];
    const archived = models.find((m) => m.id === a.id)!;
    assert.equal(archived.lifecycle, 'archived');
    assert.deepEqual(archived.lifecycle_history.map((e) => [e.from, e.to]), [[null, 'development'], ['development', 'production'], ['production', 'archived']]);
    assert.ok(archived.lifecycle_history.every((e) => e.changed_by === alice.id && Date.parse(e.changed_at)));
    assert.match(archived.lifecycle_history[2].reason, new RegExp(`model ${b.id}`));
    // A model of another task does not displace the detector.
    const sam = (await upload(alice, projectId, Buffer.from(buildSamEncoder(256)), 'enc.onnx')).body;
    await alice.patch(`/api/models/${sam.id}/lifecycle`, { lifecycle: 'production' });
    assert.equal((await alice.get(`/api/models?project_id=${projectId}`)).body.find((m: { id: number }) => m.id === b.id).lifecycle, 'production');
    const staged = await alice.patch(`/api/models/${b.id}/lifecycle`, { lifecycle: 'staging' });
    assert.equal(staged.body.lifecycle_history.at(-1).to, 'staging');
    const unchanged = await alice.patch(`/api/models/${b.id}/lifecycle`, { lifecycle: 'staging' });
    assert.equal(unchanged.body.lifecycle_history.length, staged.body.lifecycle_history.length);

    assert.equal((await alice.patch(`/api/models/${b.id}/lifecycle`, { lifecycle: 'retired' })).status, 422);
    assert.equal((await alice.patch(`/api/models/${b.id}/lifecycle`, {})).status, 422);
    assert.equal((await alice.patch('/api/models/abc/lifecycle', { lifecycle: 'staging' })).status, 422);
    assert.equal((await mallory.patch(`/api/models/${b.id}/lifecycle`, { lifecycle: 'archived' })).status, 404);
    assert.equal((await alice.patch('/api/models/999999/lifecycle', { lifecycle: 'archived' })).status, 404);
    assert.equal((await t.client().patch(`/api/models/${b.id}/lifecycle`, { lifecycle: 'archived' })).status, 401);
    assert.equal((await alice.get(`/api/models?project_id=${projectId}`)).body.find((m: { id: number }) => m.id === b.id).lifecycle, 'staging');
  });

  it('deletes a model with its stored file', async () => {
    const projectId = await project();
    const m = (await upload(alice, projectId, v8)).body;
    assert.equal((await mallory.delete(`/api/models/${m.id}`)).status, 404);
    assert.equal((await t.client().delete(`/api/models/${m.id}`)).status, 401);
    assert.equal((await alice.delete('/api/models/0')).status, 422);
    const res = await alice.delete(`/api/models/${m.id}`);
    assert.equal(res.status, 204);
    assert.deepEqual(await blobFiles(projectId), []);
    assert.deepEqual((await alice.get(`/api/projects/${projectId}/models`)).body, []);
    assert.equal((await alice.delete(`/api/models/${m.id}`)).status, 404);
    assert.equal(existsSync(join(modelsRoot, 'det.onnx')), true);
  });

  it('reports the inference device', async () => {
    const res = await alice.get('/api/system/device');
    assert.equal(res.status, 200);
    assert.equal(res.body.default_device, 'cpu');
    assert.equal(typeof res.body.cuda_available, 'boolean');
    assert.ok(res.body.execution_providers.some((p: { name: string }) => p.name === 'cpu'));
    assert.ok(res.body.inference_threads >= 1);
    assert.match(res.body.onnxruntime_version, /^\d+\.\d+/);
    assert.equal((await t.client().get('/api/system/device')).status, 401);
  });
});
